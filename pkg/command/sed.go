package command

import (
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// Edit is one textual change a command makes to a file: Old becomes New
// (Old empty: New is inserted; New empty: Old is deleted). Old and New are
// as written in the command (a sed pattern, not the text it matches).
type Edit struct {
	Old, New string
}

// SedEdits returns the edits that sed -i calls in line make, by the file
// they edit (as written in the line): s/old/new/, /pattern/d and the text
// of a, i and c commands. A file that a sed script edits in a way this
// reading does not follow (y, a command file given with -f, a dynamic
// script) has no entry, so that a caller treats its change as unread.
func SedEdits(line string) map[string][]Edit {
	out := map[string][]Edit{}
	for _, c := range Parse(line) {
		name, argv := c.Program()
		if name != "sed" {
			continue
		}
		ops, opts := operands(argv[1:])
		files := sedWrites(argv, ops, opts)
		if len(files) == 0 {
			continue
		}
		var scripts []string
		if hasOption(opts, "-e", "--expression") {
			scripts = optionValues(argv[1:], "-e", "--expression")
		} else {
			scripts = ops[:1]
		}
		var edits []Edit
		ok := !c.Dynamic && len(scripts) > 0 && !hasOption(opts, "-f", "--file")
		for _, s := range scripts {
			e, readable := readSed(s)
			ok = ok && readable
			edits = append(edits, e...)
		}
		for _, f := range files {
			if ok {
				out[f] = append(out[f], edits...)
			}
		}
	}
	return out
}

func hasOption(opts []string, names ...string) bool {
	for _, o := range opts {
		k, _, _ := strings.Cut(o, "=")
		for _, n := range names {
			if k == n {
				return true
			}
		}
	}
	return false
}

// optionValues are the values of the named options (-e v, --expression=v).
func optionValues(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		for _, n := range names {
			switch {
			case args[i] == n && i+1 < len(args):
				out = append(out, args[i+1])
				i++
			case strings.HasPrefix(n, "--") && strings.HasPrefix(args[i], n+"="):
				out = append(out, args[i][len(n)+1:])
			}
		}
	}
	return out
}

// readSed reads a sed script's commands, separated by ; or new lines.
func readSed(script string) (edits []Edit, ok bool) {
	s := script
	for {
		s = strings.TrimLeft(s, " \t\n;")
		if s == "" {
			return edits, true
		}
		// An address: a line number, $, or /re/ (also a range addr,addr).
		addr := ""
		for {
			switch {
			case s != "" && s[0] == '/':
				end := delimited(s, 1, '/')
				if end < 0 {
					return nil, false
				}
				addr, s = unescapeSed(s[1:end]), s[end+1:]
			case s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '$'):
				i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '$' })
				if i < 0 {
					return nil, false
				}
				s = s[i:]
			}
			if s == "" || s[0] != ',' {
				break
			}
			s = s[1:]
		}
		s = strings.TrimLeft(s, " \t!")
		if s == "" {
			return nil, false
		}
		switch cmd := s[0]; cmd {
		case 's':
			if len(s) < 2 {
				return nil, false
			}
			d := s[1]
			mid := delimited(s, 2, d)
			if mid < 0 {
				return nil, false
			}
			end := delimited(s, mid+1, d)
			if end < 0 {
				return nil, false
			}
			edits = append(edits, Edit{Old: unescapeSed(s[2:mid]), New: unescapeSed(s[mid+1 : end])})
			s = s[end+1:]
			s = strings.TrimLeft(s, "gpiIeEmM0123456789w")
		case 'd':
			if addr == "" {
				return nil, false // a line number: what it deletes is unknown
			}
			edits = append(edits, Edit{Old: addr})
			s = s[1:]
		case 'a', 'i', 'c':
			text := strings.TrimLeft(s[1:], " \t\\")
			text = strings.TrimLeft(strings.TrimPrefix(text, "\n"), " \t")
			if cmd == 'c' {
				edits = append(edits, Edit{Old: addr, New: text})
			} else {
				edits = append(edits, Edit{New: text})
			}
			return edits, true // the text runs to the end of the script
		case 'p', 'n', 'N', 'P', 'h', 'H', 'g', 'G', 'x', '=', 'l', 'q', 'Q':
			s = s[1:]
		default:
			return nil, false
		}
	}
}

// delimited is the index of the next unescaped d in s from i, or -1.
func delimited(s string, i int, d byte) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case d:
			return i
		}
	}
	return -1
}

// unescapeSed removes the escapes of a sed pattern that a reader does not
// see in the text: \ before the delimiter, \. and the other regular
// expression escapes, the anchors ^ and $.
func unescapeSed(s string) string {
	s = strings.TrimPrefix(s, "^")
	s = strings.TrimSuffix(s, "$")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			b.WriteByte(shell.Escaped(s[i]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
