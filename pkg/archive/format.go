// Package archive is claimcheck's cold copy of LEDGER and ATTEST: segments
// of consecutive stream messages in blob storage (gocloud.dev/blob: a
// directory by default, s3, gcs or azblob by URL), zstd-compressed, each
// with a manifest and a checkpoint signed with the key registry.
//
// Per segment, three objects under "<stream>/":
//
//	<first>-<last>.seg.zst         zstd(JSON lines of Message), first/last are 20-digit stream sequences
//	<first>-<last>.manifest.json   Manifest: range, digests, per-chain first/last n and hash, the previous manifest's digest
//	<first>-<last>.checkpoint.json DSSE envelope (CheckpointType) over Checkpoint: the manifest's digest, signed
//
// and, once retention deleted a segment, "<stream>/deleted/<first>-<last>.json"
// (a Tombstone keeping the deleted segment's manifest and checkpoint, so the
// next segment's link to it still verifies). A segment counts only once its
// checkpoint exists, and the rotator writes the checkpoint only after it
// read the segment back and compared it with the stream.
//
// Segments cover consecutive stream sequences without gaps: the archive is
// a prefix of the stream, whatever retention later removes from either.
package archive

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/klauspost/compress/zstd"

	"github.com/claimcheck/claimcheck/pkg/subject"
)

// CheckpointType is the DSSE payload type of checkpoints.
const CheckpointType = "application/vnd.claimcheck.archive-checkpoint.v1+json"

// TimeFormat of every time in manifests and checkpoints.
const TimeFormat = time.RFC3339Nano

// MaxSegmentBytes bounds a segment's uncompressed size when reading (a
// hostile or broken object cannot exhaust memory).
const MaxSegmentBytes = 1 << 30

// Message is one stream message as archived.
type Message struct {
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	Time    string `json:"time"` // when the stream stored it
	Data    string `json:"data"` // the message body (UTF-8 JSON for LEDGER and ATTEST)
	// RestoredFrom is the archived sequence this message is a copy of,
	// when `claimcheck archive restore` put it back (RestoredHeader).
	RestoredFrom uint64 `json:"restored_from,omitempty"`
}

// RestoredHeader marks a message Restore put back into a stream with the
// archived sequence it copies. Verification skips such a copy only when it
// is byte-identical to that archived message; any other repeat of an entry
// is a fault.
const RestoredHeader = "Claimcheck-Restored-From"

// ChainRange is what a LEDGER segment holds of one chain.
type ChainRange struct {
	Chain     string `json:"chain"`
	Messages  int    `json:"messages"`
	Entries   int    `json:"entries"`
	FirstN    uint64 `json:"first_n"`
	FirstPrev string `json:"first_prev_hash"`
	LastN     uint64 `json:"last_n"`
	LastHash  string `json:"last_hash"`
	LastSeq   uint64 `json:"last_seq"`  // stream sequence of the chain's last message in the segment
	LastTime  string `json:"last_time"` // and when it was stored
}

// Manifest describes one segment.
type Manifest struct {
	V             int          `json:"v"`
	Stream        string       `json:"stream"`
	Name          string       `json:"name"` // <first>-<last>
	First         uint64       `json:"first_seq"`
	Last          uint64       `json:"last_seq"`
	Messages      int          `json:"messages"`
	Entries       int          `json:"entries"` // ledger entries (LEDGER only)
	FirstTime     string       `json:"first_time"`
	LastTime      string       `json:"last_time"`
	Bytes         int64        `json:"bytes"`  // uncompressed
	Stored        int64        `json:"stored"` // compressed, as uploaded
	Compression   string       `json:"compression"`
	SegmentSHA256 string       `json:"segment_sha256"` // of the uploaded (compressed) object
	ContentSHA256 string       `json:"content_sha256"` // of the uncompressed JSON lines
	Prev          string       `json:"prev_manifest_sha256,omitempty"`
	PrevName      string       `json:"prev_name,omitempty"`
	Chains        []ChainRange `json:"chains,omitempty"`
	CreatedAt     string       `json:"created_at"`
}

// Checkpoint is the signed statement over a manifest.
type Checkpoint struct {
	V              int    `json:"v"`
	Stream         string `json:"stream"`
	Name           string `json:"name"`
	First          uint64 `json:"first_seq"`
	Last           uint64 `json:"last_seq"`
	ManifestSHA256 string `json:"manifest_sha256"`
	SegmentSHA256  string `json:"segment_sha256"`
	Prev           string `json:"prev_manifest_sha256,omitempty"`
	SignedAt       string `json:"signed_at"`
}

// Tombstone keeps what verification needs of a segment retention deleted.
type Tombstone struct {
	V          int    `json:"v"`
	Name       string `json:"name"`
	Manifest   string `json:"manifest"`   // the manifest's bytes
	Checkpoint string `json:"checkpoint"` // the checkpoint envelope's bytes
	DeletedAt  string `json:"deleted_at"`
	EventID    string `json:"event_id"` // the ledger event recording the deletion
}

// SegmentName is "<first>-<last>" with 20-digit sequences (so names sort
// in stream order).
func SegmentName(first, last uint64) string {
	return fmt.Sprintf("%020d-%020d", first, last)
}

// ParseName reads a segment name.
func ParseName(name string) (first, last uint64, err error) {
	a, b, ok := strings.Cut(name, "-")
	if !ok || len(a) != 20 || len(b) != 20 {
		return 0, 0, fmt.Errorf("segment name %q: want <first>-<last> of 20 digits each", name)
	}
	if first, err = strconv.ParseUint(a, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("segment name %q: %w", name, err)
	}
	if last, err = strconv.ParseUint(b, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("segment name %q: %w", name, err)
	}
	if first == 0 || last < first {
		return 0, 0, fmt.Errorf("segment name %q: empty or reversed range", name)
	}
	return first, last, nil
}

// Object keys.
func SegmentKey(stream, name string) string    { return stream + "/" + name + ".seg.zst" }
func ManifestKey(stream, name string) string   { return stream + "/" + name + ".manifest.json" }
func CheckpointKey(stream, name string) string { return stream + "/" + name + ".checkpoint.json" }
func TombstoneKey(stream, name string) string  { return stream + "/deleted/" + name + ".json" }

// Digest is the hex SHA-256 of b.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var encoderOpts = []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1)}

// Built is a segment ready to upload.
type Built struct {
	Segment  []byte // compressed
	Manifest Manifest
}

// Build makes a segment of msgs (consecutive stream sequences, no gaps)
// for stream; prev is the previous segment's manifest bytes (nil for the
// first). For LEDGER it records each chain's first and last entry.
func Build(streamName string, msgs []Message, prev []byte, now time.Time) (Built, error) {
	if len(msgs) == 0 {
		return Built{}, errors.New("archive: empty segment")
	}
	var content bytes.Buffer
	size := 0
	for _, m := range msgs {
		size += len(m.Data) + len(m.Subject) + len(m.Time) + 96 // escaping aside
	}
	content.Grow(size + size/8) // one allocation: growing by doubling zeroes ~2× the memory
	for i, m := range msgs {
		if i > 0 && m.Seq != msgs[i-1].Seq+1 {
			return Built{}, fmt.Errorf("archive: sequence %d follows %d: segments cover consecutive sequences", m.Seq, msgs[i-1].Seq)
		}
		if !utf8.ValidString(m.Data) {
			return Built{}, fmt.Errorf("archive: message %d is not UTF-8", m.Seq)
		}
		line, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			return Built{}, fmt.Errorf("archive: message %d: %w", m.Seq, err)
		}
		content.Write(line)
		content.WriteByte('\n')
	}
	enc, err := zstd.NewWriter(nil, encoderOpts...)
	if err != nil {
		return Built{}, err
	}
	seg := enc.EncodeAll(content.Bytes(), nil)
	first, last := msgs[0], msgs[len(msgs)-1]
	m := Manifest{
		V: 1, Stream: streamName, Name: SegmentName(first.Seq, last.Seq), First: first.Seq, Last: last.Seq,
		Messages: len(msgs), FirstTime: first.Time, LastTime: last.Time,
		Bytes: int64(content.Len()), Stored: int64(len(seg)), Compression: "zstd",
		SegmentSHA256: Digest(seg), ContentSHA256: Digest(content.Bytes()),
		CreatedAt: now.UTC().Format(TimeFormat),
	}
	if prev != nil {
		var pm Manifest
		if err := json.Unmarshal(prev, &pm, json.RejectUnknownMembers(false)); err != nil {
			return Built{}, fmt.Errorf("archive: previous manifest: %w", err)
		}
		if pm.Last+1 != first.Seq {
			return Built{}, fmt.Errorf("archive: segment starts at %d, the previous one ended at %d", first.Seq, pm.Last)
		}
		m.Prev, m.PrevName = Digest(prev), pm.Name
	}
	if m.Chains, m.Entries, err = chainRanges(msgs); err != nil {
		return Built{}, err
	}
	return Built{Segment: seg, Manifest: m}, nil
}

// entryHead is what ranges need of a ledger entry.
type entryHead struct {
	N    uint64 `json:"n"`
	Prev string `json:"prev_hash"`
	Hash string `json:"hash"`
}

// chainRanges summarises the ledger chains in msgs; messages outside
// cc.ledger.* (ATTEST) have none.
func chainRanges(msgs []Message) ([]ChainRange, int, error) {
	byChain := map[string]*ChainRange{}
	entries := 0
	for _, m := range msgs {
		name, ok := subject.ChainOf(m.Subject)
		if !ok {
			continue
		}
		for raw := range bytes.SplitSeq([]byte(m.Data), []byte{'\n'}) {
			var h entryHead
			if err := json.Unmarshal(raw, &h, json.RejectUnknownMembers(false)); err != nil {
				return nil, 0, fmt.Errorf("archive: message %d: entry unreadable: %w", m.Seq, err)
			}
			entries++
			r := byChain[name]
			if r == nil {
				r = &ChainRange{Chain: name, FirstN: h.N, FirstPrev: h.Prev}
				byChain[name] = r
			}
			r.Entries++
			r.LastN, r.LastHash = h.N, h.Hash
		}
		r := byChain[name]
		r.Messages++
		r.LastSeq, r.LastTime = m.Seq, m.Time
	}
	out := make([]ChainRange, 0, len(byChain))
	for _, r := range byChain {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ChainRange) int { return strings.Compare(a.Chain, b.Chain) })
	return out, entries, nil
}

// Decode checks a segment object against its manifest and returns its
// messages: the object's digest, the decompressed content's digest and
// size, consecutive sequences from First to Last, and (for LEDGER) the
// per-chain ranges recomputed from the entries.
func Decode(seg []byte, m Manifest) ([]Message, error) {
	msgs, err := DecodeMessages(seg, m)
	if err != nil {
		return nil, err
	}
	chains, entries, err := chainRanges(msgs)
	if err != nil {
		return nil, err
	}
	if entries != m.Entries || !slices.Equal(chains, m.Chains) {
		return nil, errors.New("the manifest's chain ranges do not match the segment's entries")
	}
	return msgs, nil
}

// DecodeMessages is Decode without recomputing the chain ranges: for a
// caller that compares the messages with the ones the manifest was built
// from (the rotator's read-back), which implies them.
func DecodeMessages(seg []byte, m Manifest) ([]Message, error) {
	if Digest(seg) != m.SegmentSHA256 {
		return nil, errors.New("segment digest does not match the manifest (the object was changed or replaced)")
	}
	if m.Bytes < 0 || m.Bytes > MaxSegmentBytes {
		return nil, fmt.Errorf("manifest size %d is outside 0..%d", m.Bytes, MaxSegmentBytes)
	}
	// Decompress no more than the manifest's size: a hostile object cannot
	// make this allocate beyond it.
	limit := uint64(max(m.Bytes, 1<<20))
	dec, err := zstd.NewReader(bytes.NewReader(seg), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(limit),
		zstd.WithDecoderMaxWindow(limit))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	// Exactly the manifest's size, in one allocation; one byte more must
	// not exist.
	content := make([]byte, m.Bytes)
	if _, err := io.ReadFull(dec, content); err != nil {
		return nil, fmt.Errorf("segment does not decompress to the manifest's %d bytes: %w", m.Bytes, err)
	}
	if n, _ := dec.Read(make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("segment decompresses to more than the manifest's %d bytes", m.Bytes)
	}
	if int64(len(content)) != m.Bytes || Digest(content) != m.ContentSHA256 {
		return nil, errors.New("segment content does not match the manifest")
	}
	var msgs []Message
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(nil, MaxSegmentBytes)
	for sc.Scan() {
		var msg Message
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			return nil, fmt.Errorf("segment line %d: %w", len(msgs)+1, err)
		}
		if want := m.First + uint64(len(msgs)); msg.Seq != want {
			return nil, fmt.Errorf("segment line %d has sequence %d, want %d", len(msgs)+1, msg.Seq, want)
		}
		msgs = append(msgs, msg)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(msgs) != m.Messages || len(msgs) == 0 || msgs[len(msgs)-1].Seq != m.Last {
		return nil, fmt.Errorf("segment holds %d messages, the manifest says %d (%d..%d)", len(msgs), m.Messages, m.First, m.Last)
	}
	return msgs, nil
}

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func sortListed(l []Listed) {
	slices.SortFunc(l, func(a, b Listed) int { return strings.Compare(a.Name, b.Name) })
}

func jsonUnmarshal(b []byte, v any) error {
	return json.Unmarshal(b, v, json.RejectUnknownMembers(false))
}
