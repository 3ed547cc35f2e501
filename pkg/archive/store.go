package archive

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/fileblob"  // file://
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://
	"gocloud.dev/gcerrors"
)

// MaxObjectBytes bounds what Get reads of one object.
const MaxObjectBytes = MaxSegmentBytes

// Store is an archive bucket.
type Store struct {
	URL    string
	bucket *blob.Bucket
}

// DefaultURL is the archive under a data directory.
func DefaultURL(dataDir string) string {
	abs, err := filepath.Abs(filepath.Join(dataDir, "archive"))
	if err != nil {
		abs = filepath.Join(dataDir, "archive")
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// Open opens the bucket at rawURL (file://, s3://, gs://, azblob://). A
// file:// directory is created (0700) when missing. Open checks that the
// bucket can be listed, so a wrong URL fails here, naming it.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("archive URL %q: want file:///dir, s3://bucket, gs://bucket or azblob://container", rawURL)
	}
	switch u.Scheme {
	case "file":
		if u.Path == "" {
			return nil, fmt.Errorf("archive URL %q: no directory", rawURL)
		}
		if err := os.MkdirAll(filepath.FromSlash(u.Path), 0o700); err != nil {
			return nil, fmt.Errorf("archive URL %q: %w", rawURL, err)
		}
		q := u.Query()
		// Keep no .attrs side files: the manifest carries what matters.
		q.Set("metadata", "skip")
		// Temporary files next to the final ones: a rename from os.TempDir
		// fails when the archive is on another file system.
		q.Set("no_tmp_dir", "true")
		u.RawQuery = q.Encode()
	case "s3", "gs", "azblob":
	default:
		return nil, fmt.Errorf("archive URL %q: unsupported scheme %q (file, s3, gs, azblob)", rawURL, u.Scheme)
	}
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("archive URL %q: %w", rawURL, err)
	}
	it := b.List(&blob.ListOptions{})
	if _, err := it.Next(ctx); err != nil && !errors.Is(err, io.EOF) {
		_ = b.Close()
		return nil, fmt.Errorf("archive URL %q: cannot list the bucket: %w", rawURL, err)
	}
	return &Store{URL: rawURL, bucket: b}, nil
}

// Close releases the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// ErrNotFound is returned by Get for a missing object.
var ErrNotFound = errors.New("archive object not found")

// Put writes one object whole (visible only once complete). A failed write
// is aborted, never closed: gocloud's WriteAll closes the writer after a
// failed write, and closing the file driver's writer renames what was
// written (a truncated object) into place.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	wctx, abort := context.WithCancel(ctx)
	defer abort()
	sum := md5.Sum(data) //nolint:gosec // the blob API's integrity check, not a security control
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: contentType, ContentMD5: sum[:]})
	if err != nil {
		return fmt.Errorf("archive: write %s: %w", key, err)
	}
	if _, err := w.Write(data); err != nil {
		abort() // the writer's context ends first: its Close then discards what was written
		_ = w.Close()
		return fmt.Errorf("archive: write %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("archive: write %s: %w", key, err)
	}
	return nil
}

// Get reads one object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		return nil, fmt.Errorf("archive: read %s: %w", key, err)
	}
	defer r.Close() //nolint:errcheck // read-only
	if r.Size() > MaxObjectBytes {
		return nil, fmt.Errorf("archive: %s is %d bytes, more than %d", key, r.Size(), MaxObjectBytes)
	}
	b := make([]byte, r.Size())
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("archive: read %s: %w", key, err)
	}
	return b, nil
}

// Delete removes one object; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.bucket.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("archive: delete %s: %w", key, err)
	}
	return nil
}

// Listing is what the archive holds of one stream.
type Listing struct {
	// Segments by name in stream order, with which of their three objects exist.
	Segments []Listed
	// Tombstones by segment name.
	Tombstones []string
	// Foreign are keys under the stream's prefix that are no archive object.
	Foreign []string
}

// Listed is one segment name and its objects.
type Listed struct {
	Name                                   string
	Segment, Manifest, Checkpoint, Deleted bool
}

// List reads the stream's prefix.
func (s *Store) List(ctx context.Context, streamName string) (Listing, error) {
	var out Listing
	byName := map[string]*Listed{}
	get := func(name string) *Listed {
		if l := byName[name]; l != nil {
			return l
		}
		l := &Listed{Name: name}
		byName[name] = l
		return l
	}
	prefix := streamName + "/"
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("archive: list %s: %w", prefix, err)
		}
		rest := strings.TrimPrefix(obj.Key, prefix)
		name, kind := rest, ""
		for _, suf := range []string{".seg.zst", ".manifest.json", ".checkpoint.json"} {
			if n, ok := strings.CutSuffix(rest, suf); ok {
				name, kind = n, suf
			}
		}
		if d, ok := strings.CutPrefix(rest, "deleted/"); ok {
			if n, ok := strings.CutSuffix(d, ".json"); ok {
				if _, _, err := ParseName(n); err == nil {
					out.Tombstones = append(out.Tombstones, n)
					continue
				}
			}
		}
		if _, _, err := ParseName(name); kind == "" || err != nil {
			out.Foreign = append(out.Foreign, obj.Key)
			continue
		}
		l := get(name)
		switch kind {
		case ".seg.zst":
			l.Segment = true
		case ".manifest.json":
			l.Manifest = true
		case ".checkpoint.json":
			l.Checkpoint = true
		}
	}
	for _, l := range byName {
		out.Segments = append(out.Segments, *l)
	}
	sort.Slice(out.Segments, func(i, j int) bool { return out.Segments[i].Name < out.Segments[j].Name })
	sort.Strings(out.Tombstones)
	return out, nil
}
