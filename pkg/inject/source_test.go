package inject

import "testing"

func TestSource(t *testing.T) {
	const project = "/home/u/proj"
	tests := []struct {
		tool, input string
		want        Tag
	}{
		{"Read", `{"file_path":"/home/u/proj/README.md"}`, FileInternal},
		{"Read", `{"file_path":"docs/a.md"}`, FileInternal},
		{"Read", `{"file_path":"/home/u/proj/../other/x"}`, FileExternal},
		{"Read", `{"file_path":"/home/u/project2/x"}`, FileExternal},
		{"Read", `{"file_path":"~/.bashrc"}`, FileExternal},
		{"Read", `{"file_path":"/etc/hosts"}`, FileExternal},
		{"Grep", `{"pattern":"TODO"}`, FileInternal},
		{"Grep", `{"pattern":"TODO","path":"/usr/lib/go"}`, FileExternal},
		{"Glob", `{"pattern":"**/*.go","path":"/home/u/proj/pkg"}`, FileInternal},
		{"WebFetch", `{"url":"https://example.com","prompt":"x"}`, NetworkExternal},
		{"WebSearch", `{"query":"go 1.26"}`, NetworkExternal},
		{"mcp__github__get_issue", `{"issue":1}`, MCPExternal},
		{"mcp__x__y", `not json`, MCPExternal},
		{"Task", `{"prompt":"look"}`, AgentHandoff},
		{"Bash", `{"command":"go test ./..."}`, CommandOutput},
		{"Bash", `{"command":"curl -s https://example.com"}`, NetworkExternal},
		{"Bash", `{"command":"go build && curl -s https://x | jq ."}`, NetworkExternal},
		{"Bash", `{"command":"sudo -u root wget https://x"}`, NetworkExternal},
		{"Bash", `{"command":"git clone https://github.com/a/b"}`, NetworkExternal},
		{"Bash", `{"command":"git status"}`, CommandOutput},
		{"Bash", `{"command":"cat README.md"}`, FileInternal},
		{"Bash", `{"command":"cat /etc/passwd"}`, FileExternal},
		{"Bash", `{"command":"echo $(curl -s x.io)"}`, NetworkExternal},
		{"Bash", `{"command":"if then fi ("}`, Unknown},
		{"Bash", `{"description":"no command"}`, Unknown},
		{"shell", `{"command":["curl","https://x"]}`, NetworkExternal},
		{"run_shell_command", `{"command":"ls"}`, FileInternal},
		{"Frobnicate", `{}`, Unknown},
		{"Read", `[1]`, Unknown},
	}
	for _, tt := range tests {
		if got := Source(tt.tool, []byte(tt.input), project); got != tt.want {
			t.Errorf("Source(%s, %s) = %s, want %s", tt.tool, tt.input, got, tt.want)
		}
	}
}

func FuzzSource(f *testing.F) {
	for _, s := range []struct{ tool, input string }{
		{"Bash", `{"command":"sudo -u x env A=1 timeout 5 curl https://x | jq . > out; cat ../a"}`},
		{"Bash", `{"command":"echo $(wget -O- x) <(cat /etc/passwd) 'unterminated"}`},
		{"Read", `{"file_path":"../../etc/shadow"}`},
		{"shell", `{"command":["xargs","-I{}","curl","{}"]}`},
		{"read_many_files", `{"paths":["a",1,null]}`},
	} {
		f.Add(s.tool, s.input, "/home/u/proj")
	}
	f.Fuzz(func(t *testing.T, tool, input, project string) {
		if _, ok := rank[Source(tool, []byte(input), project)]; !ok {
			t.Fatalf("Source(%q, %q) returned an unknown tag", tool, input)
		}
	})
}
