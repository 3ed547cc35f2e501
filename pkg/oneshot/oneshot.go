// Package oneshot is a minimal NATS client for short-lived processes such as
// claimcheck-hook, which Claude Code starts for every hook event: connect,
// publish to JetStream and wait for the acknowledgement, or send one request
// and read one reply, then exit. It exists because the full client
// (github.com/nats-io/nats.go) roughly doubles the hook's start-up time
// (binary size and package initialisation; see the start-up figures in
// docs/performance.md), and a hook that runs on every tool call must be
// cheap. It speaks the documented NATS client protocol (INFO, CONNECT,
// PING/PONG, SUB, HPUB, MSG/HMSG, -ERR) and supports plain TCP and TLS, with
// user/password or token credentials from the URL. It does not reconnect:
// callers spool on failure. Long-running services use nats.go.
package oneshot

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Errors a caller reacts to. Every failure to deliver is reported; the caller
// decides whether to spool.
var (
	ErrNoResponders = errors.New("no responders: no stream or service is listening on the subject")
	ErrTimeout      = errors.New("timed out waiting for NATS")
	ErrProtocol     = errors.New("NATS protocol error")
	// ErrNoTLS: the URL or the server asks for TLS, and this build has none
	// (the oneshot_notls tag).
	ErrNoTLS = errors.New("TLS is required but this build has no TLS support")
	// ErrRefused: the server refused the connection's credentials (none,
	// unknown, expired or revoked). Retrying does not help; a person must.
	ErrRefused = errors.New("NATS refused the credentials")
)

// maxUnknownPayload bounds a message before the server's INFO has said what
// its max_payload is.
const maxUnknownPayload = 8 << 20

// Options configure Dial.
type Options struct {
	// URL: nats://[user:pass@|token@]host:port or tls://… . Several URLs may
	// be given separated by commas; they are tried in order.
	URL string
	// Name is sent to the server in CONNECT.
	Name string
	// TLS overrides the TLS configuration (tls:// URLs, or when the server
	// requires TLS). Builds with the oneshot_notls tag have no TLS (see
	// TLSSupported).
	TLS *TLSConfig
	// Creds is a NATS credentials file (a user JWT and its nkey seed, as
	// `nsc` writes them) or a file holding an nkey seed alone: Dial signs
	// the server's nonce with it. Credentials, when set, are used instead
	// (a caller that read them already).
	Creds       string
	Credentials *Credentials
	// Inbox is the prefix of reply subjects (default _INBOX): an identity
	// may receive replies only under its own (subject.Inbox).
	Inbox string
	// Bearer says the credentials' JWT is a bearer token (the server asks
	// for no nonce signature): to a loopback address, CONNECT with the JWT
	// then travels with the first request, without waiting for the
	// server's INFO. Elsewhere INFO is read first, as for any credentials,
	// so that nothing secret is sent before TLS is known to be in place.
	Bearer bool
	// Verify makes Dial complete the handshake (PING/PONG) before returning;
	// otherwise the handshake travels with the first request.
	Verify bool
}

// Conn is one client connection. It is not safe for concurrent use.
type Conn struct {
	optimistic  bool
	nc          net.Conn
	r           *bufio.Reader
	w           *bufio.Writer
	inbox       string
	inboxPrefix string
	nextID      int
	maxPay      int
	headers     bool
	inflight    map[string]*Msg // requests sent: nil until their reply is read
}

type serverInfo struct {
	Headers      bool   `json:"headers"`
	MaxPayload   int    `json:"max_payload"`
	TLSRequired  bool   `json:"tls_required"`
	AuthRequired bool   `json:"auth_required"`
	TLSAvailable bool   `json:"tls_available"`
	Nonce        string `json:"nonce"`
}

type connectMsg struct {
	Verbose      bool   `json:"verbose"`
	Pedantic     bool   `json:"pedantic"`
	TLSRequired  bool   `json:"tls_required"`
	Name         string `json:"name,omitempty"`
	Lang         string `json:"lang"`
	Version      string `json:"version"`
	Protocol     int    `json:"protocol"`
	Headers      bool   `json:"headers"`
	NoResponders bool   `json:"no_responders"`
	User         string `json:"user,omitempty"`
	Pass         string `json:"pass,omitempty"`
	Token        string `json:"auth_token,omitempty"`
	JWT          string `json:"jwt,omitempty"`
	NKey         string `json:"nkey,omitempty"`
	Sig          string `json:"sig,omitempty"`
}

// Dial connects to the first reachable URL: it reads the server's INFO,
// upgrades to TLS when required, and prepares CONNECT (sent with the first
// request, or verified at once with Options.Verify).
func Dial(ctx context.Context, o Options) (*Conn, error) {
	var errs []error
	for _, raw := range strings.Split(o.URL, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		c, err := dialOne(ctx, raw, o)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, errors.New("nats: no URL given")
	}
	return nil, errors.Join(errs...)
}

func dialOne(ctx context.Context, raw string, o Options) (*Conn, error) {
	if !strings.Contains(raw, "://") {
		raw = "nats://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("nats url %q: %w", redact(raw), err)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "4222")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("nats connect %s: %w", host, err)
	}
	c := &Conn{nc: nc, r: bufio.NewReaderSize(nc, 32<<10), w: bufio.NewWriterSize(nc, 32<<10)}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	// Without credentials and without TLS there is nothing to learn from
	// INFO before speaking: send CONNECT at once and read INFO with the
	// first reply. With credentials or TLS, INFO is read first, so that
	// nothing secret is ever sent before TLS is known to be in place.
	c.optimistic = u.Scheme == "nats" && u.User == nil && o.TLS == nil && o.Creds == "" &&
		(o.Credentials == nil || o.Bearer && o.Credentials.JWT != "" && loopback(u.Hostname()))
	c.inboxPrefix = o.Inbox
	if c.inboxPrefix == "" {
		c.inboxPrefix = "_INBOX"
	}
	if err := c.handshake(ctx, u, o); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("nats %s: %w", host, err)
	}
	return c, nil
}

func (c *Conn) handshake(ctx context.Context, u *url.URL, o Options) error {
	if c.optimistic && !o.Verify {
		c.headers = true
		cm := connectMsg{Name: o.Name, Lang: "go-oneshot", Version: "1", Protocol: 1, Headers: true, NoResponders: true}
		if o.Credentials != nil {
			cm.JWT = o.Credentials.JWT
		}
		c.writeConnect(cm)
		return nil
	}
	line, err := c.readLine(ctx)
	if err != nil {
		return err
	}
	rest, ok := strings.CutPrefix(line, "INFO ")
	if !ok {
		return fmt.Errorf("%w: expected INFO, got %q", ErrProtocol, clip(line))
	}
	var info serverInfo
	if err := json.Unmarshal([]byte(rest), &info); err != nil {
		return fmt.Errorf("%w: INFO: %w", ErrProtocol, err)
	}
	wantTLS := u.Scheme == "tls" || info.TLSRequired
	if wantTLS {
		if err := c.startTLS(ctx, u, o); err != nil {
			return err
		}
	}
	if !info.Headers {
		return fmt.Errorf("%w: server does not support headers (needs NATS 2.2 or later)", ErrProtocol)
	}
	c.headers, c.maxPay = info.Headers, info.MaxPayload
	cm := connectMsg{TLSRequired: wantTLS, Name: o.Name, Lang: "go-oneshot", Version: "1", Protocol: 1, Headers: true, NoResponders: true}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			cm.User, cm.Pass = u.User.Username(), p
		} else {
			cm.Token = u.User.Username()
		}
	}
	if creds := o.Credentials; creds != nil || o.Creds != "" {
		if creds == nil {
			var err error
			if creds, err = ReadCredentials(o.Creds); err != nil {
				return err
			}
		}
		cm.JWT, cm.NKey, cm.Sig = creds.Sign(info.Nonce)
	}
	// CONNECT and our reply subscription are buffered, not sent: the first
	// request carries them in the same write, so connecting and publishing
	// cost one round trip. A refused CONNECT surfaces as -ERR on that
	// request. Verify (a PING) makes Dial wait for the server's answer.
	c.writeConnect(cm)
	if !o.Verify {
		return nil
	}
	c.w.WriteString("PING\r\n")
	if err := c.w.Flush(); err != nil {
		return err
	}
	for {
		line, err := c.readLine(ctx)
		if err != nil {
			return err
		}
		switch {
		case line == "PONG":
			return nil
		case line == "PING":
			if err := c.pong(); err != nil {
				return err
			}
		case strings.HasPrefix(line, "-ERR"):
			return fmt.Errorf("%w: %s", ErrRefused, strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "-ERR")), "'"))
		case strings.HasPrefix(line, "INFO "), line == "+OK":
		default:
			return fmt.Errorf("%w: unexpected %q during handshake", ErrProtocol, clip(line))
		}
	}
}

// loopback reports a host name that stays on this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeConnect buffers CONNECT and the reply-inbox subscription.
func (c *Conn) writeConnect(cm connectMsg) {
	b, _ := json.Marshal(cm)
	var buf [12]byte
	for i := range buf {
		buf[i] = byte(mrand.Uint32())
	}
	c.inbox = c.inboxPrefix + "." + hex.EncodeToString(buf[:])
	fmt.Fprintf(c.w, "CONNECT %s\r\nSUB %s.* 1\r\n", b, c.inbox)
}

// Msg is a reply.
type Msg struct {
	Subject string
	Status  string // from the header status line, e.g. "503"
	Header  map[string][]string
	Data    []byte
}

// Request publishes data with headers hdr to subject and returns the first
// reply. A no-responders status yields ErrNoResponders.
func (c *Conn) Request(ctx context.Context, subject string, hdr map[string]string, data []byte) (*Msg, error) {
	p, err := c.Send(ctx, subject, hdr, data)
	if err != nil {
		return nil, err
	}
	return c.Wait(ctx, p)
}

// deadline makes the connection's reads and writes end with ctx: each
// operation brings its own deadline (a connection outlives the context it
// was dialled with when a hook reuses it for its decision record).
func (c *Conn) deadline(ctx context.Context) {
	dl, _ := ctx.Deadline() // zero: none
	_ = c.nc.SetDeadline(dl)
}

// Pending is a request written to the server whose reply has not been read.
type Pending struct{ reply string }

// Send writes a request and returns without reading its reply, so that
// several requests can be in flight on the connection at once (a hook
// publishes its event and asks the gate in one round trip); Wait collects
// each reply, in any order. ctx bounds the write.
func (c *Conn) Send(ctx context.Context, subject string, hdr map[string]string, data []byte) (Pending, error) {
	c.deadline(ctx)
	if c.maxPay > 0 && len(data) > c.maxPay {
		return Pending{}, fmt.Errorf("message of %d bytes exceeds the server's max_payload %d", len(data), c.maxPay)
	}
	var hb bytes.Buffer
	hb.WriteString("NATS/1.0\r\n")
	for k, v := range hdr {
		if k == "" || strings.ContainsAny(k, ": \r\n") || strings.ContainsAny(v, "\r\n") {
			return Pending{}, fmt.Errorf("header %q: invalid characters", k)
		}
		hb.WriteString(k + ": " + v + "\r\n")
	}
	hb.WriteString("\r\n")
	c.nextID++
	reply := c.inbox + "." + strconv.Itoa(c.nextID)
	fmt.Fprintf(c.w, "HPUB %s %s %d %d\r\n", subject, reply, hb.Len(), hb.Len()+len(data))
	c.w.Write(hb.Bytes())
	c.w.Write(data)
	c.w.WriteString("\r\n")
	if err := c.w.Flush(); err != nil {
		return Pending{}, fmt.Errorf("nats publish: %w", err)
	}
	if c.inflight == nil {
		c.inflight = map[string]*Msg{}
	}
	c.inflight[reply] = nil
	return Pending{reply: reply}, nil
}

// Wait returns the reply to p, keeping replies to other requests in flight
// for their own Wait. A no-responders status yields ErrNoResponders.
func (c *Conn) Wait(ctx context.Context, p Pending) (*Msg, error) {
	m, ok := c.inflight[p.reply]
	if !ok {
		return nil, errors.New("nats: no request in flight for this reply")
	}
	c.deadline(ctx)
	for m == nil {
		got, err := c.next(ctx)
		if err != nil {
			return nil, err
		}
		switch prev, ok := c.inflight[got.Subject]; {
		case got.Subject == p.reply:
			m = got
		case ok && prev == nil:
			c.inflight[got.Subject] = got // for its own Wait
		}
		// Anything else is a late reply to a request given up on.
	}
	delete(c.inflight, p.reply)
	if m.Status == "503" {
		return nil, ErrNoResponders
	}
	return m, nil
}

// PubAck is JetStream's answer to a publish.
type PubAck struct {
	Stream    string `json:"stream"`
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate"`
	Error     *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// APIError is a JetStream error reply.
type APIError struct {
	Code        int
	ErrCode     int
	Description string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("jetstream: %s (code %d, err_code %d)", e.Description, e.Code, e.ErrCode)
}

// Publish sends data to a JetStream stream and waits for its acknowledgement.
func (c *Conn) Publish(ctx context.Context, subject string, hdr map[string]string, data []byte) (PubAck, error) {
	p, err := c.Send(ctx, subject, hdr, data)
	if err != nil {
		return PubAck{}, err
	}
	return c.WaitAck(ctx, p)
}

// WaitAck is Wait for a publish to a JetStream stream: it decodes the
// acknowledgement, and a JetStream error becomes an *APIError.
func (c *Conn) WaitAck(ctx context.Context, p Pending) (PubAck, error) {
	var ack PubAck
	m, err := c.Wait(ctx, p)
	if err != nil {
		return ack, err
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil {
		return ack, fmt.Errorf("%w: bad JetStream ack %q: %w", ErrProtocol, clip(string(m.Data)), err)
	}
	if ack.Error != nil {
		return ack, &APIError{Code: ack.Error.Code, ErrCode: ack.Error.ErrCode, Description: ack.Error.Description}
	}
	if ack.Stream == "" || ack.Seq == 0 {
		return ack, fmt.Errorf("%w: JetStream ack without stream or sequence: %q", ErrProtocol, clip(string(m.Data)))
	}
	return ack, nil
}

// next reads until the next MSG/HMSG, answering PINGs.
func (c *Conn) next(ctx context.Context) (*Msg, error) {
	for {
		line, err := c.readLine(ctx)
		if err != nil {
			return nil, err
		}
		switch {
		case line == "PING":
			if err := c.pong(); err != nil {
				return nil, err
			}
			continue
		case line == "PONG", line == "+OK":
			continue
		case strings.HasPrefix(line, "INFO "):
			var info serverInfo
			if err := json.Unmarshal([]byte(line[5:]), &info); err != nil {
				return nil, fmt.Errorf("%w: INFO: %w", ErrProtocol, err)
			}
			if c.optimistic && (info.TLSRequired || !info.Headers) {
				return nil, fmt.Errorf("%w: server requires TLS or lacks header support; use a tls:// URL (NATS 2.2 or later)", ErrProtocol)
			}
			if info.MaxPayload > 0 {
				c.maxPay = info.MaxPayload
			}
			continue
		case strings.HasPrefix(line, "-ERR"):
			msg := strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "-ERR")), "'")
			if strings.Contains(strings.ToLower(msg), "authorization") || strings.Contains(strings.ToLower(msg), "authentication") {
				return nil, fmt.Errorf("%w: %s", ErrRefused, msg)
			}
			return nil, fmt.Errorf("nats server error: %s", msg)
		}
		f := strings.Fields(line)
		var m Msg
		var hdrLen, total int
		switch {
		case len(f) >= 4 && f[0] == "MSG":
			m.Subject = f[1]
			total, err = strconv.Atoi(f[len(f)-1])
		case len(f) >= 5 && f[0] == "HMSG":
			m.Subject = f[1]
			hdrLen, err = strconv.Atoi(f[len(f)-2])
			if err == nil {
				total, err = strconv.Atoi(f[len(f)-1])
			}
		default:
			return nil, fmt.Errorf("%w: unexpected %q", ErrProtocol, clip(line))
		}
		limit := maxUnknownPayload
		if c.maxPay > 0 {
			limit = c.maxPay + 4096
		}
		if err != nil || total < 0 || hdrLen < 0 || hdrLen > total || total > limit {
			return nil, fmt.Errorf("%w: bad message line %q", ErrProtocol, clip(line))
		}
		buf := make([]byte, total+2)
		if _, err := ioReadFull(ctx, c, buf); err != nil {
			return nil, err
		}
		if hdrLen > 0 {
			m.Status, m.Header = parseHeader(buf[:hdrLen])
		}
		m.Data = buf[hdrLen:total]
		return &m, nil
	}
}

func parseHeader(b []byte) (string, map[string][]string) {
	lines := strings.Split(string(b), "\r\n")
	status := ""
	if f := strings.Fields(lines[0]); len(f) >= 2 {
		status = f[1]
	}
	h := map[string][]string{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok {
			h[k] = append(h[k], strings.TrimSpace(v))
		}
	}
	return status, h
}

func (c *Conn) pong() error {
	c.w.WriteString("PONG\r\n")
	return c.w.Flush()
}

func (c *Conn) readLine(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", ErrTimeout
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", ioErr(err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func ioReadFull(ctx context.Context, c *Conn, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		if err := ctx.Err(); err != nil {
			return n, ErrTimeout
		}
		k, err := c.r.Read(buf[n:])
		n += k
		if err != nil {
			return n, ioErr(err)
		}
	}
	return n, nil
}

func ioErr(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout
	}
	return fmt.Errorf("nats read: %w", err)
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// redact hides credentials in a URL for error messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	return raw
}
