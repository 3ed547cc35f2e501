package pretool

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkFetch applies the URL rules to a WebFetch url.
func (p *Policy) checkFetch(v *verdict, raw string) {
	if len(raw) > p.Limits.MaxURLBytes {
		v.say(Deny, msgURLTooLong, detail{size: len(raw), limit: p.Limits.MaxURLBytes})
		return
	}
	u, err := parseURL(raw)
	if err != nil {
		v.say(Deny, msgURLMalformed, detail{url: quote(raw), err: err.Error()})
		return
	}
	if !p.c.schemes[u.scheme] {
		v.say(Deny, msgURLScheme, detail{url: quote(raw), scheme: u.scheme, schemes: strings.Join(p.URLs.Schemes, " or ")})
		return
	}
	for _, h := range u.hosts {
		rule, why, err := p.classifyHost(h)
		if err != nil {
			v.say(Deny, msgURLMalformed, detail{url: quote(raw), err: err.Error()})
			return
		}
		if rule != "" {
			v.say(Deny, hostMessages[rule], detail{url: quote(raw), host: quote(h), why: why})
			return
		}
	}
}

// hostMessages are the messages of the rules classifyHost finds.
var hostMessages = map[string]msg{
	RuleURLPrivate:      msgURLPrivate,
	RuleURLMetadata:     msgURLMetadata,
	RuleURLLocalhost:    msgURLLocalhost,
	RuleURLDeniedDomain: msgURLDeniedDomain,
}

// fetchURL is what claimcheck extracts from a URL: the scheme and every
// host a client might connect to.
type fetchURL struct {
	scheme string
	hosts  []string // lower case, percent-decoded
}

// parseURL extracts the scheme and the host the way a WHATWG URL parser
// (Node, browsers) does for special schemes — tabs and newlines removed,
// any run of / or \ after the scheme skipped, \ ending the authority,
// userinfo up to the last @ — and, as a second candidate, the way an RFC
// 3986 parser does (\ is not a delimiter). Both hosts are checked.
func parseURL(raw string) (fetchURL, error) {
	var u fetchURL
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	i := 0
	for i < len(s) && (isAlpha(s[i]) || i > 0 && (isDigit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')) {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return u, errors.New("it is not an absolute URL (no scheme)")
	}
	u.scheme = strings.ToLower(s[:i])
	if u.scheme != "http" && u.scheme != "https" {
		return u, nil // refused by scheme; the host does not matter
	}
	rest := strings.TrimLeft(s[i+1:], `/\`)
	whatwg := authority(rest, `/\?#`)
	rfc := authority(strings.TrimLeft(s[i+1:], "/"), "/?#")
	seen := map[string]bool{}
	for _, a := range []string{whatwg, rfc} {
		h, err := hostOf(a)
		if err != nil {
			return u, err
		}
		if !seen[h] {
			seen[h] = true
			u.hosts = append(u.hosts, h)
		}
	}
	return u, nil
}

func isAlpha(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }
func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func authority(s, stops string) string {
	if i := strings.IndexAny(s, stops); i >= 0 {
		return s[:i]
	}
	return s
}

// hostOf returns the host of an authority: after the last @, before the
// port; percent-decoded and lower case.
func hostOf(a string) (string, error) {
	if i := strings.LastIndex(a, "@"); i >= 0 {
		a = a[i+1:]
	}
	var h string
	if strings.HasPrefix(a, "[") {
		end := strings.Index(a, "]")
		if end < 0 {
			return "", errors.New("its IPv6 host has no closing ]")
		}
		h = a[:end+1]
	} else {
		h, _, _ = strings.Cut(a, ":")
	}
	d, err := percentDecode(h)
	if err != nil {
		return "", err
	}
	if d == "" {
		return "", errors.New("it has no host")
	}
	if !utf8.ValidString(d) {
		return "", errors.New("its host is not valid UTF-8")
	}
	for _, r := range d {
		if r < 0x80 {
			if r <= ' ' || r == 0x7f {
				return "", errors.New("its host contains control characters or spaces")
			}
			continue
		}
		// IDNA (UTS 46) maps compatibility characters to ASCII: full-width
		// １２７。０。０。１ is 127.0.0.1, ｌｏｃａｌｈｏｓｔ and
		// mathematical 𝐥𝐨𝐜𝐚𝐥𝐡𝐨𝐬𝐭 are localhost. Hosts with such
		// characters are refused rather than normalised here.
		if compatibilityRune(r) {
			return "", fmt.Errorf("its host contains the character %U, which URL parsers map to ASCII", r)
		}
	}
	return strings.ToLower(d), nil
}

// compatibilityRune reports non-ASCII runes that IDNA may map to ASCII
// letters, digits or dots, or that have no place in a host name.
func compatibilityRune(r rune) bool {
	switch {
	case unicode.IsNumber(r), unicode.IsPunct(r), unicode.IsSpace(r), unicode.IsSymbol(r),
		unicode.Is(unicode.Cf, r), unicode.Is(unicode.Cc, r), unicode.Is(unicode.Mn, r) && r < 0x0370:
		return true
	case r == 0x00AA, r == 0x00BA, r == 0x017F, r == 0x0130, r == 0x0131:
		return true
	case 0x2000 <= r && r <= 0x2BFF, // punctuation, super/subscripts, letterlike, number forms, enclosed alphanumerics
		0x3000 <= r && r <= 0x303F,   // CJK symbols and punctuation (。)
		0x3200 <= r && r <= 0x33FF,   // enclosed CJK, CJK compatibility
		0xFB00 <= r && r <= 0xFB4F,   // ligatures (ﬆ)
		0xFE00 <= r && r <= 0xFE6F,   // variation selectors, small forms
		0xFF00 <= r && r <= 0xFFEF,   // full-width and half-width forms
		0x1D400 <= r && r <= 0x1D7FF, // mathematical alphanumerics
		0x1F100 <= r && r <= 0x1F1FF, // enclosed alphanumeric supplement
		0xE0000 <= r && r <= 0xE007F: // tags
		return true
	}
	return false
}

func percentDecode(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("its host has a truncated percent escape")
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", errors.New("its host has an invalid percent escape")
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

// Metadata endpoints of cloud providers: instance credentials live there.
var (
	metadataAddrs = map[netip.Addr]bool{
		netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OCI, DigitalOcean, …
		netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task credentials
		netip.MustParseAddr("169.254.170.23"):  true, // AWS EKS pod identity
		netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
		netip.MustParseAddr("192.0.0.192"):     true, // Oracle Cloud (legacy)
		netip.MustParseAddr("fd00:ec2::254"):   true, // AWS IPv6
		netip.MustParseAddr("fd00:ec2::23"):    true, // AWS EKS pod identity IPv6
	}
	metadataNames = map[string]bool{
		"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
		"instance-data": true, "instance-data.ec2.internal": true, "metadata.azure.com": true,
	}
)

// Non-public IPv4 and IPv6 ranges beyond what netip classifies.
var reserved = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "in 0.0.0.0/8 (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address (100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address (240.0.0.0/4)"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local IPv6 address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation IPv6 address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only IPv6 address"},
}

// classifyHost returns the rule a host breaks ("" for none) and why.
func (p *Policy) classifyHost(h string) (rule, why string, err error) {
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return "", "", errors.New("its IPv6 host has no closing ]")
		}
		a, perr := netip.ParseAddr(h[1 : len(h)-1])
		if perr != nil {
			return "", "", fmt.Errorf("its IPv6 host is not a valid address")
		}
		rule, why = classifyAddr(a)
		return rule, why, nil
	}
	name := strings.TrimSuffix(h, ".")
	if name == "" || strings.HasSuffix(name, ".") && endsInNumber(strings.TrimSuffix(name, ".")) {
		return "", "", errors.New("it has an empty host")
	}
	if endsInNumber(name) {
		a, ok := parseIPv4(name)
		if !ok {
			return "", "", errors.New("its host looks like an IPv4 address but is not a valid one")
		}
		rule, why = classifyAddr(a)
		return rule, why, nil
	}
	if a, perr := netip.ParseAddr(name); perr == nil { // unbracketed IPv6 (only via RFC 3986 oddities)
		rule, why = classifyAddr(a)
		return rule, why, nil
	}
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return RuleURLLocalhost, "the local machine (localhost)", nil
	case metadataNames[name]:
		return RuleURLMetadata, "a cloud metadata endpoint", nil
	}
	for _, d := range p.URLs.DeniedDomains {
		d = strings.ToLower(d)
		if suffix, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(name, "."+suffix) {
				return RuleURLDeniedDomain, fmt.Sprintf("under a domain the policy denies (%s)", d), nil
			}
		} else if name == d {
			return RuleURLDeniedDomain, fmt.Sprintf("a domain the policy denies (%s)", d), nil
		}
	}
	return "", "", nil
}

// endsInNumber is the WHATWG host parser's test for an IPv4 host: its last
// dot-separated part (ignoring one trailing empty part) is decimal digits
// or 0x followed by hex digits.
func endsInNumber(h string) bool {
	parts := strings.Split(h, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	if x, ok := cutHexPrefix(last); ok && strings.Trim(x, "0123456789abcdefABCDEF") == "" {
		return true
	}
	return false
}

func cutHexPrefix(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:], true
	}
	return s, false
}

// parseIPv4 is the WHATWG IPv4 parser (also what inet_aton accepts): one
// to four parts, each decimal, octal (leading 0) or hex (0x); the last part
// fills the remaining bytes. 127.1, 2130706433, 0x7f.1 and 0177.0.0.1 are
// all 127.0.0.1.
func parseIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, part := range parts {
		n, ok := parseIPv4Number(part)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	if x, ok := cutHexPrefix(s); ok {
		s, base = x, 16
		if s == "" {
			return 0, true
		}
	} else if len(s) > 1 && s[0] == '0' {
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// classifyAddr returns the rule an address breaks and why; IPv4 addresses
// embedded in IPv6 (mapped, compatible, NAT64, 6to4, Teredo) are judged as
// the IPv4 address they carry.
func classifyAddr(a netip.Addr) (rule, why string) {
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	if metadataAddrs[a] {
		return RuleURLMetadata, "a cloud metadata endpoint (" + a.String() + ")"
	}
	switch {
	case a.IsLoopback():
		return RuleURLPrivate, "a loopback address (" + a.String() + ")"
	case a.IsUnspecified():
		return RuleURLPrivate, "the unspecified address (" + a.String() + ")"
	case a.IsPrivate():
		return RuleURLPrivate, "a private address (" + a.String() + ")"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return RuleURLPrivate, "a link-local address (" + a.String() + ")"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return RuleURLPrivate, "a multicast address (" + a.String() + ")"
	}
	for _, r := range reserved {
		if r.prefix.Contains(a) {
			return RuleURLPrivate, r.why + " (" + a.String() + ")"
		}
	}
	if a.Is6() {
		if v4, ok := embeddedIPv4(a); ok {
			if rule, why := classifyAddr(v4); rule != "" {
				return rule, why + ", embedded in " + a.String()
			}
		}
	}
	return "", ""
}

// embeddedIPv4 extracts the IPv4 address some IPv6 forms carry.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	v4 := func(x []byte) netip.Addr { return netip.AddrFrom4([4]byte{x[0], x[1], x[2], x[3]}) }
	zero := func(x []byte) bool {
		for _, c := range x {
			if c != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case zero(b[:12]): // IPv4-compatible ::a.b.c.d
		return v4(b[12:]), true
	case zero(b[:8]) && b[8] == 0xff && b[9] == 0xff && zero(b[10:12]): // IPv4-translated ::ffff:0:a.b.c.d
		return v4(b[12:]), true
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b: // NAT64 64:ff9b::/96 and 64:ff9b:1::/48
		return v4(b[12:]), true
	case b[0] == 0x20 && b[1] == 0x02: // 6to4 2002::/16
		return v4(b[2:6]), true
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0: // Teredo 2001::/32: the client address, inverted
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}

// checkShellURL applies the rules that hold for URLs in shell commands
// (curl, wget): metadata endpoints are refused; private addresses are not,
// since testing a local server from the shell is ordinary work.
func (p *Policy) checkShellURL(v *verdict, prog, arg string) {
	if len(arg) > p.Limits.MaxURLBytes {
		return
	}
	s := arg
	if !strings.Contains(s, "://") {
		if strings.HasPrefix(s, "-") || strings.ContainsAny(s, " ") || !strings.Contains(s, ".") && !strings.Contains(s, ":") {
			return
		}
		s = "http://" + s // curl's default scheme
	}
	u, err := parseURL(s)
	if err != nil || (u.scheme != "http" && u.scheme != "https") {
		return
	}
	for _, h := range u.hosts {
		rule, why, err := p.classifyHost(h)
		if err == nil && rule == RuleURLMetadata {
			v.say(Deny, msgShellMetadata, detail{prog: prog, url: quote(arg), why: why})
			return
		}
	}
}
