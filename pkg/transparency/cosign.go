package transparency

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	tnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrRolledBack is returned when a witness holds a larger tree of this
// log than the checkpoint offered: the log's store was rolled back or cut
// short, or another copy of the log ran ahead. Stop and investigate.
var ErrRolledBack = errors.New("a witness holds a larger tree than the log")

// WitnessClient asks one witness to cosign the log's checkpoints
// (c2sp.org/tlog-witness, the client side).
type WitnessClient struct {
	URL      string        // the submission prefix (…/add-checkpoint is appended)
	Verifier note.Verifier // the witness's cosignature/v1 key
	HTTP     *http.Client  // nil: a client with a 10 s timeout
	size     int64         // the witness's latest size, as last learned
}

// NewWitnessClient makes a client of the witness at url with the
// cosignature/v1 verifier key vkey.
func NewWitnessClient(url, vkey string) (*WitnessClient, error) {
	v, err := tnote.NewVerifierForCosignatureV1(vkey)
	if err != nil {
		return nil, fmt.Errorf("witness %s: key: %w", url, err)
	}
	return &WitnessClient{URL: strings.TrimSuffix(url, "/"), Verifier: v}, nil
}

// Cosign submits signed (the checkpoint of tree) with a consistency proof
// from the witness's size (prove) and returns the witness's cosignature
// lines, verified. A 409 teaches it the witness's size and it tries once
// more; a witness ahead of tree is ErrRolledBack.
func (c *WitnessClient) Cosign(ctx context.Context, signed []byte, tree tlog.Tree,
	prove func(old int64) (tlog.TreeProof, error)) ([]byte, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	for range 2 {
		if c.size > tree.N {
			return nil, fmt.Errorf("witness %s (%s): %w: it cosigned %d leaves, the checkpoint has %d",
				c.Verifier.Name(), c.URL, ErrRolledBack, c.size, tree.N)
		}
		proof, err := prove(c.size)
		if err != nil {
			return nil, fmt.Errorf("witness %s: proof from %d: %w", c.Verifier.Name(), c.size, err)
		}
		var body bytes.Buffer
		fmt.Fprintf(&body, "old %d\n", c.size)
		for _, h := range proof {
			body.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
		}
		body.WriteString("\n")
		body.Write(signed)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/add-checkpoint", &body)
		if err != nil {
			return nil, fmt.Errorf("witness %s: %w", c.URL, err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("witness %s: %w", c.URL, err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("witness %s: %w", c.URL, err)
		}
		switch {
		case resp.StatusCode == http.StatusOK:
			sigs, err := c.verify(signed, b)
			if err != nil {
				return nil, err
			}
			c.size = tree.N
			return sigs, nil
		case resp.StatusCode == http.StatusConflict && resp.Header.Get("Content-Type") == "text/x.tlog.size":
			n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("witness %s: a conflict with size %q", c.URL, b)
			}
			c.size = n
		default:
			return nil, fmt.Errorf("witness %s: %s: %s", c.URL, resp.Status, strings.TrimSpace(string(b)))
		}
	}
	return nil, fmt.Errorf("witness %s: its size changed while asking (%d)", c.URL, c.size)
}

// verify keeps the lines of sigs that are the witness's cosignatures of
// signed, and fails when none is.
func (c *WitnessClient) verify(signed, sigs []byte) ([]byte, error) {
	n, err := note.Open(append(append([]byte(nil), signed...), sigs...), note.VerifierList(c.Verifier))
	if err != nil {
		return nil, fmt.Errorf("witness %s: its answer does not verify: %w", c.URL, err)
	}
	var out bytes.Buffer
	for _, s := range n.Sigs {
		if s.Name == c.Verifier.Name() && s.Hash == c.Verifier.KeyHash() {
			fmt.Fprintf(&out, "— %s %s\n", s.Name, s.Base64)
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("witness %s: no cosignature of its key in the answer", c.URL)
	}
	return out.Bytes(), nil
}
