package decision

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
)

// KeySetDir is the directory, in the hook's state directory (or the
// managed install's system directory), that holds one trusted key set per
// claimcheck server.
const KeySetDir = "gate-keys"

// KeySetPath is where the key set trusted for the gatekeeper behind the
// NATS URL(s) natsURL lives: dir/gate-keys/<ServerName(natsURL)>.json.
// Each server has its own file, so two claimcheck servers on one host (two
// projects, or a test beside a real one) never overwrite each other's keys.
func KeySetPath(dir, natsURL string) string {
	return filepath.Join(dir, KeySetDir, ServerName(natsURL)+".json")
}

// ServerName names a claimcheck server by the NATS URL(s) its hooks use:
// a readable label (the first server's host and port) and a digest of the
// whole normalised URL list. URLs are compared after normalisation (scheme
// and host in lower case, nats:// and port 4222 filled in, user info and
// paths dropped, the list sorted): "127.0.0.1:4222" and
// "nats://127.0.0.1:4222" name the same server; "localhost" and
// "127.0.0.1" do not.
func ServerName(natsURL string) string {
	var urls []string
	for _, u := range strings.Split(natsURL, ",") {
		if u = normaliseURL(u); u != "" && !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	slices.Sort(urls)
	sum := sha256.Sum256([]byte(strings.Join(urls, ",")))
	label := "none"
	if len(urls) > 0 {
		_, hostPort, _ := strings.Cut(urls[0], "://")
		label = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
				return r
			}
			return '_'
		}, hostPort)
		if len(label) > 48 {
			label = label[:48]
		}
	}
	return label + "-" + hex.EncodeToString(sum[:6])
}

// normaliseURL brings one NATS URL to scheme://host:port in lower case.
func normaliseURL(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	if u == "" {
		return ""
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		scheme, rest = "nats", u
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if !hasPort(rest) {
		port := "4222"
		switch scheme {
		case "ws":
			port = "80"
		case "wss":
			port = "443"
		}
		rest += ":" + port
	}
	return scheme + "://" + rest
}

// hasPort reports whether host[:port] names a port ("[::1]" does not,
// "[::1]:4222" and "h:4222" do).
func hasPort(hostPort string) bool {
	if strings.HasPrefix(hostPort, "[") {
		return strings.Contains(hostPort, "]:")
	}
	return strings.Contains(hostPort, ":")
}
