package transparency

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	tnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Witness is the witness side of c2sp.org/tlog-witness: it cosigns a
// checkpoint of a log it knows only when the checkpoint is a consistent
// extension of the one it cosigned last for that origin, and keeps that
// state in its own directory. It serves add-checkpoint over HTTP
// (Handler).
type Witness struct {
	dir    string
	signer note.Signer
	vkey   string
	logs   map[string][]note.Verifier // origin → the log's keys
	logger *slog.Logger
	mu     sync.Mutex // check and persist atomically (the spec's race)
}

// WitnessState is what a witness keeps per log: the checkpoint it cosigned
// last.
type WitnessState struct {
	Origin string `json:"origin"`
	Size   int64  `json:"size"`
	Hash   string `json:"hash"` // base64 root hash
	Note   string `json:"note"` // the checkpoint as submitted
}

// Witness errors, each the HTTP status the protocol gives it.
var (
	ErrUnknownLog   = errors.New("unknown log origin")                                         // 404
	ErrNotSigned    = errors.New("no signature of the log's keys verifies")                    // 403
	ErrBadRequest   = errors.New("malformed request")                                          // 400
	ErrConflict     = errors.New("old size is not the size of the latest cosigned checkpoint") // 409
	ErrInconsistent = errors.New("the consistency proof does not verify")                      // 422
)

// OpenWitness opens (or creates) a witness in dir: its Ed25519 key
// (witness.key, made on first use with name), its state per log, and the
// logs it trusts (origin → the note verifier keys of the log's keys).
func OpenWitness(dir, name string, logs map[string][]string, logger *slog.Logger) (*Witness, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	skey, err := witnessKey(filepath.Join(dir, "witness.key"), name)
	if err != nil {
		return nil, err
	}
	s, err := tnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		return nil, fmt.Errorf("witness key: %w", err)
	}
	w := &Witness{dir: dir, signer: s, logs: map[string][]note.Verifier{}, logger: logger}
	if w.vkey, err = cosignerVerifierKey(skey); err != nil {
		return nil, err
	}
	for origin, keys := range logs {
		if err := w.SetLog(origin, keys); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// SetLog makes the witness trust origin's checkpoints signed by keys (note
// verifier keys), in place of the keys it trusted for it before: a log
// that rotates its keys gives its witnesses the new ones.
func (w *Witness) SetLog(origin string, keys []string) error {
	if !validOrigin(origin) {
		return fmt.Errorf("witness: log origin %q: not a valid origin line", origin)
	}
	var vs []note.Verifier
	for _, k := range keys {
		v, err := tnote.NewVerifier(k)
		if err != nil {
			return fmt.Errorf("witness: key of log %s: %w", origin, err)
		}
		if v.Name() != origin {
			return fmt.Errorf("witness: key %q is named %q, not the log's origin %q", k, v.Name(), origin)
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return fmt.Errorf("witness: log %s: no key", origin)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logs[origin] = vs
	return nil
}

// witnessKey reads the witness's private note key, making it on first use.
func witnessKey(path, name string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("witness key: %w", err)
	}
	if name == "" {
		return "", errors.New("witness key: none yet, and no name to make one with")
	}
	skey, _, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", fmt.Errorf("witness key: %w", err)
	}
	if err := writeFileSync(path, []byte(skey+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("witness key: %w", err)
	}
	return skey, nil
}

// cosignerVerifierKey is the cosignature/v1 verifier key of a private
// Ed25519 note key.
func cosignerVerifierKey(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 {
		return "", errors.New("witness key: not a note signer key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 33 {
		return "", errors.New("witness key: not an Ed25519 note signer key")
	}
	pub, ok := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	if !ok {
		return "", errors.New("witness key: not an Ed25519 key")
	}
	vkey, err := note.NewEd25519VerifierKey(parts[2], pub)
	if err != nil {
		return "", fmt.Errorf("witness key: %w", err)
	}
	return tnote.VKeyToCosignatureV1(vkey)
}

// VerifierKey is the witness's cosignature/v1 verifier key, for the logs
// and clients that count its cosignatures.
func (w *Witness) VerifierKey() string { return w.vkey }

// Name is the witness's key name.
func (w *Witness) Name() string { return w.signer.Name() }

// AddCheckpoint handles one add-checkpoint body and returns the
// cosignature lines, or an error wrapping one of the Err values; on
// ErrConflict, size is the witness's latest size for the origin.
func (w *Witness) AddCheckpoint(body []byte) (cosig []byte, size int64, err error) {
	old, proof, signed, err := parseAddCheckpoint(body)
	if err != nil {
		return nil, 0, err
	}
	origin, _, _ := strings.Cut(string(signed), "\n")
	w.mu.Lock()
	keys, ok := w.logs[origin]
	w.mu.Unlock()
	if !ok {
		return nil, 0, fmt.Errorf("%w: %q", ErrUnknownLog, origin)
	}
	cp, err := Open(signed, origin, keys, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrNotSigned, err)
	}
	if old > cp.Tree.N {
		return nil, 0, fmt.Errorf("%w: old size %d is larger than the checkpoint's %d", ErrBadRequest, old, cp.Tree.N)
	}
	if old == 0 && len(proof) > 0 {
		return nil, 0, fmt.Errorf("%w: a consistency proof from size 0", ErrBadRequest)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st, err := w.state(origin)
	if err != nil {
		return nil, 0, err
	}
	if old != st.Size {
		return nil, st.Size, fmt.Errorf("%w: old size %d, the latest cosigned is %d", ErrConflict, old, st.Size)
	}
	if st.Size > 0 {
		prev, err := hashOf(st.Hash)
		if err != nil {
			return nil, 0, fmt.Errorf("witness state of %s: %w", origin, err)
		}
		if cp.Tree.N == st.Size && cp.Tree.Hash != prev {
			return nil, st.Size, fmt.Errorf("%w: a different root hash for size %d (a fork)", ErrConflict, st.Size)
		}
		if cp.Tree.N > st.Size {
			if err := tlog.CheckTree(proof, cp.Tree.N, cp.Tree.Hash, st.Size, prev); err != nil {
				w.logger.Warn("witness: inconsistent checkpoint (possible log misbehaviour)", slog.String("origin", origin),
					slog.Int64("old", st.Size), slog.Int64("size", cp.Tree.N), slog.String("checkpoint", string(signed)))
				return nil, 0, fmt.Errorf("%w: from %d to %d: %w", ErrInconsistent, st.Size, cp.Tree.N, err)
			}
		}
	}
	cosigned, err := note.Sign(&note.Note{Text: string(Body(origin, cp.Tree))}, w.signer)
	if err != nil {
		return nil, 0, fmt.Errorf("witness: cosign: %w", err)
	}
	next := WitnessState{Origin: origin, Size: cp.Tree.N, Hash: base64.StdEncoding.EncodeToString(cp.Tree.Hash[:]), Note: string(signed)}
	if err := w.save(next); err != nil {
		return nil, 0, err
	}
	_, sigs, _ := bytes.Cut(cosigned, []byte("\n\n"))
	return sigs, cp.Tree.N, nil
}

// parseAddCheckpoint splits an add-checkpoint body: the old size line, up
// to 63 proof lines, an empty line, the checkpoint.
func parseAddCheckpoint(body []byte) (old int64, proof tlog.TreeProof, signed []byte, err error) {
	head, signed, ok := bytes.Cut(body, []byte("\n\n"))
	if !ok {
		return 0, nil, nil, fmt.Errorf("%w: no empty line before the checkpoint", ErrBadRequest)
	}
	sc := bufio.NewScanner(bytes.NewReader(head))
	if !sc.Scan() {
		return 0, nil, nil, fmt.Errorf("%w: no old size line", ErrBadRequest)
	}
	s, ok := strings.CutPrefix(sc.Text(), "old ")
	old, err = strconv.ParseInt(s, 10, 64)
	if !ok || err != nil || old < 0 || s != strconv.FormatInt(old, 10) {
		return 0, nil, nil, fmt.Errorf("%w: old size line %q", ErrBadRequest, sc.Text())
	}
	for sc.Scan() {
		h, err := base64.StdEncoding.DecodeString(sc.Text())
		if err != nil || len(h) != tlog.HashSize {
			return 0, nil, nil, fmt.Errorf("%w: proof line %q is not a base64 hash", ErrBadRequest, sc.Text())
		}
		if len(proof) == 63 {
			return 0, nil, nil, fmt.Errorf("%w: more than 63 proof lines", ErrBadRequest)
		}
		proof = append(proof, tlog.Hash(h))
	}
	return old, proof, signed, nil
}

func hashOf(b64 string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) != tlog.HashSize {
		return h, fmt.Errorf("hash %q", b64)
	}
	copy(h[:], b)
	return h, nil
}

// statePath is the file of an origin's state.
func (w *Witness) statePath(origin string) string {
	return filepath.Join(w.dir, "logs", base64.RawURLEncoding.EncodeToString([]byte(origin))+".json")
}

// state returns the latest cosigned checkpoint of origin (size 0: none).
func (w *Witness) state(origin string) (WitnessState, error) {
	b, err := os.ReadFile(w.statePath(origin))
	if errors.Is(err, os.ErrNotExist) {
		return WitnessState{Origin: origin}, nil
	}
	if err != nil {
		return WitnessState{}, fmt.Errorf("witness state of %s: %w", origin, err)
	}
	var st WitnessState
	if err := json.Unmarshal(b, &st); err != nil || st.Origin != origin {
		return WitnessState{}, fmt.Errorf("witness state of %s: unreadable: %w", origin, err)
	}
	return st, nil
}

// Latest returns the witness's latest cosigned checkpoint of origin.
func (w *Witness) Latest(origin string) (WitnessState, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state(origin)
}

// save persists an origin's state durably before the cosignature goes out.
func (w *Witness) save(st WitnessState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	p := w.statePath(st.Origin)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("witness state: %w", err)
	}
	if err := writeFileSync(p, b, 0o600); err != nil {
		return fmt.Errorf("witness state of %s: %w", st.Origin, err)
	}
	return nil
}

// writeFileSync writes a file through a temporary one, fsynced and renamed,
// and fsyncs the directory: after a crash the file is the old or the new.
func writeFileSync(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close() //nolint:errcheck // read-only
	return d.Sync()
}

// maxAddCheckpoint bounds an add-checkpoint body: 63 proof lines and a
// checkpoint with a few signatures are far below it.
const maxAddCheckpoint = 64 << 10

// Handler serves the witness protocol: POST /add-checkpoint, GET
// /checkpoint?origin=O (the latest cosigned checkpoint as submitted, for
// monitoring; not part of the protocol) and GET /healthz (for probes).
func (w *Witness) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-checkpoint", func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxAddCheckpoint))
		if err != nil {
			http.Error(rw, "body too large or unreadable", http.StatusBadRequest)
			return
		}
		sigs, size, err := w.AddCheckpoint(body)
		switch {
		case err == nil:
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = rw.Write(sigs)
		case errors.Is(err, ErrConflict) && !strings.Contains(err.Error(), "fork"):
			rw.Header().Set("Content-Type", "text/x.tlog.size")
			rw.WriteHeader(http.StatusConflict)
			_, _ = fmt.Fprintf(rw, "%d\n", size)
		default:
			http.Error(rw, err.Error(), statusOf(err))
		}
	})
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		// Serving means the key and the state directory were opened.
		_, _ = io.WriteString(rw, "ok\n")
	})
	mux.HandleFunc("GET /checkpoint", func(rw http.ResponseWriter, r *http.Request) {
		st, err := w.Latest(r.URL.Query().Get("origin"))
		if err != nil || st.Size == 0 {
			http.Error(rw, "no checkpoint of that origin", http.StatusNotFound)
			return
		}
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(rw, st.Note)
	})
	return mux
}

// statusOf maps a witness error to its HTTP status.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrUnknownLog):
		return http.StatusNotFound
	case errors.Is(err, ErrNotSigned):
		return http.StatusForbidden
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrInconsistent):
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// ParseLogs reads a witness's logs file: "log <origin> <key>" lines (as
// `claimcheck ledger checkpoint --keys` prints them), blank lines and #
// comments, adding each log's keys to out. An error names the line.
func ParseLogs(r io.Reader, out map[string][]string) error {
	sc := bufio.NewScanner(r)
	for i := 1; sc.Scan(); i++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "log" {
			return fmt.Errorf("line %d: want \"log <origin> <key>\" (claimcheck ledger checkpoint --keys)", i)
		}
		out[f[1]] = append(out[f[1]], f[2])
	}
	return sc.Err()
}
