package command

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMoveOf(t *testing.T) {
	for _, tt := range []struct {
		line string
		want string // "aside: …", "restores: …", "copies DEST: …" or ""
	}{
		{"git stash", "aside: `git stash` stashes the uncommitted changes"},
		{"git stash push -u", "aside: `git stash push -u` stashes the uncommitted changes"},
		{"git stash list", ""},
		{"git stash show -p", ""},
		{"git stash pop", "restores: `git stash pop` brings stashed changes back"},
		{"git -C . stash apply", "restores: `git -C . stash apply` brings stashed changes back"},
		{"git checkout main", "aside: `git checkout main` checks out another revision"},
		{"git checkout HEAD~1", "aside: `git checkout HEAD~1` checks out another revision"},
		{"git checkout -- .", "aside: `git checkout -- .` replaces files with their committed versions"},
		{"git checkout add.go", "aside: `git checkout add.go` replaces files with their committed versions"},
		{"git checkout -b fix", ""},
		{"git checkout -", "restores: `git checkout -` goes back to the previous branch"},
		{"git switch main", "aside: `git switch main` switches to another revision"},
		{"git switch -c fix", ""},
		{"git switch -", "restores: `git switch -` goes back to the previous branch"},
		{"git reset --hard", "aside: `git reset --hard` resets the working tree"},
		{"git reset --keep HEAD~2", "aside: `git reset --keep HEAD~2` resets the working tree"},
		{"git reset HEAD~1", "aside: `git reset HEAD~1` moves to another revision"},
		{"git reset add.go", ""},
		{"git reset --soft HEAD~1", ""},
		{"git restore --source HEAD~1 add.go", "aside: `git restore --source HEAD~1 add.go` restores files from another revision"},
		{"git restore add.go", "aside: `git restore add.go` discards changes to the files"},
		{"git restore --staged add.go", ""},
		{"git worktree add ../old HEAD~1", "copies ../old: `git worktree add ../old HEAD~1` checks out a committed revision elsewhere"},
		{"git worktree list", ""},
		{"git clone . /tmp/c", "copies /tmp/c: `git clone . /tmp/c` clones the committed tree"},
		{"git clone https://github.com/x/y", ""},
		{"git archive HEAD", "copies : `git archive HEAD` exports the committed tree"},
		{"cp -r . /tmp/copy", "copies /tmp/copy: `cp -r . /tmp/copy` copies the tree"},
		{"cp -a ./ ../copy", "copies ../copy: `cp -a ./ ../copy` copies the tree"},
		{"cp add.go /tmp/", ""},
		{"rsync -a ./ /tmp/copy", "copies /tmp/copy: `rsync -a ./ /tmp/copy` copies the tree"},
		{"git status", ""},
		{"git diff HEAD~1", ""},
	} {
		t.Run(tt.line, func(t *testing.T) {
			m := MoveOf(strings.Fields(tt.line))
			got := ""
			switch {
			case m.SetsAside != "":
				got = "aside: " + m.SetsAside
			case m.Restores != "":
				got = "restores: " + m.Restores
			case m.Copies:
				got = "copies " + m.Dest + ": " + m.Why
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if m.Moved() != (tt.want != "") {
				t.Errorf("Moved() = %v", m.Moved())
			}
		})
	}
}

func TestRunsOf(t *testing.T) {
	want := []string{"go", "test"}
	for _, tt := range []struct {
		name, line string
		want       []Run
	}{
		{"plain", "go test ./...", []Run{{Prog: []string{"go", "test", "./..."}, Dir: "/repo"}}},
		{"cd below", "cd pkg && go test ./...", []Run{{Prog: []string{"go", "test", "./..."}, Dir: "/repo/pkg", Moved: "cd pkg"}}},
		{"go -C", "go -C ../other test ./...", nil},
		{"stash around", "git stash && go test ./... ; git stash pop", []Run{{Prog: []string{"go", "test", "./..."}, Dir: "/repo",
			SetAside: "`git stash` stashes the uncommitted changes"}}},
		{"stash popped first", "git stash; git stash pop; go test ./...", []Run{{Prog: []string{"go", "test", "./..."}, Dir: "/repo"}}},
		{"copy and run there", "cp -r . /tmp/c && cd /tmp/c && go test ./...", []Run{{Prog: []string{"go", "test", "./..."}, Dir: "/tmp/c",
			Moved: "cd /tmp/c", SetAside: "it ran in a copy: `cp -r . /tmp/c` copies the tree"}}},
		{"worktree below", "git worktree add .wt HEAD~1 && cd .wt && go test ./...", []Run{{Prog: []string{"go", "test", "./..."},
			Dir: "/repo/.wt", Moved: "cd .wt", SetAside: "it ran in a copy: `git worktree add .wt HEAD~1` checks out a committed revision elsewhere"}}},
		{"archive", "git archive HEAD | tar -x -C /tmp/a && cd /tmp/a && go test ./...", []Run{{Prog: []string{"go", "test", "./..."},
			Dir: "/tmp/a", Moved: "cd /tmp/a", SetAside: "it ran in a copy: `git archive HEAD` exports the committed tree"}}},
		{"copy elsewhere, run here", "cp -r . /tmp/c && go test ./...", []Run{{Prog: []string{"go", "test", "./..."}, Dir: "/repo"}}},
		{"sudo", "sudo -u dev go test ./...", []Run{{Prog: []string{"go", "test", "./..."}, Dir: "/repo"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "go -C" {
				tt.want = []Run{{Prog: []string{"go", "-C", "../other", "test", "./..."}, Dir: "/other", Moved: "-C ../other"}}
				got := RunsOf(tt.line, "/repo", []string{"go"})
				if d := cmp.Diff(tt.want, got); d != "" {
					t.Errorf("runs (-want +got):\n%s", d)
				}
				return
			}
			if d := cmp.Diff(tt.want, RunsOf(tt.line, "/repo", want)); d != "" {
				t.Errorf("runs (-want +got):\n%s", d)
			}
		})
	}
}

// TestTreeAcrossLines: what one tool call sets aside or copies holds for
// the next ones until it is brought back.
func TestTreeAcrossLines(t *testing.T) {
	want := []string{"go", "test"}
	type step struct {
		line, cwd, aside, moved string
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"stash, run, pop", []step{
			{"git stash", "/repo", "", "`git stash` stashes the uncommitted changes"},
			{"go test ./...", "/repo", "`git stash` stashes the uncommitted changes", ""},
			{"git stash pop", "/repo", "", "`git stash pop` brings stashed changes back"},
			{"go test ./...", "/repo", "", ""},
		}},
		{"worktree, run there", []step{
			{"git worktree add .wt HEAD~1", "/repo", "", "`git worktree add .wt HEAD~1` checks out a committed revision elsewhere"},
			{"go test ./...", "/repo/.wt/pkg", "it ran in a copy: `git worktree add .wt HEAD~1` checks out a committed revision elsewhere", ""},
			{"go test ./...", "/repo", "", ""},
		}},
		{"archive is the line's", []step{
			{"git archive -o /tmp/a.tar HEAD", "/repo", "", "`git archive -o /tmp/a.tar HEAD` exports the committed tree"},
			{"cd pkg && go test ./...", "/repo", "", ""},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var tree Tree
			for i, s := range tt.steps {
				runs, moved := tree.Line(s.line, s.cwd, want)
				if moved != s.moved {
					t.Errorf("step %d: moved %q, want %q", i, moved, s.moved)
				}
				if len(runs) > 0 && runs[0].SetAside != s.aside {
					t.Errorf("step %d: set aside %q, want %q", i, runs[0].SetAside, s.aside)
				}
			}
		})
	}
}

func TestRunDir(t *testing.T) {
	for _, tt := range []struct{ line, dir, flag string }{
		{"make -C web test", "web", "-C web"},
		{"make --directory=web test", "web", "--directory web"},
		{"make -f sub/Makefile test", "sub", "-f sub/Makefile"},
		{"npm --prefix web test", "web", "--prefix web"},
		{"pnpm -C web test", "web", "-C web"},
		{"yarn --cwd web test", "web", "--cwd web"},
		{"cargo test --manifest-path crates/a/Cargo.toml", "crates/a", "--manifest-path crates/a/Cargo.toml"},
		{"mvn -f svc/pom.xml test", "svc", "-f svc/pom.xml"},
		{"mvn -f svc test", "svc", "-f svc"},
		{"gradle -p app test", "app", "-p app"},
		{"go -C /x test ./...", "/x", "-C /x"},
		{"go test -C x", "", ""},
		{"go test ./...", "", ""},
		{"pytest tests", "", ""},
	} {
		dir, flag := RunDir(strings.Fields(tt.line))
		if dir != tt.dir || flag != tt.flag {
			t.Errorf("%q: %q %q, want %q %q", tt.line, dir, flag, tt.dir, tt.flag)
		}
	}
}

func FuzzRunsOf(f *testing.F) {
	for _, s := range []string{"git stash && go test ./...; git stash pop", "cp -r . /tmp/x && cd /tmp/x && make -C a test",
		"git worktree add ../o HEAD && npm --prefix ../o test", "cd \"$D\" && go test"} {
		f.Add(s, "/repo")
	}
	f.Fuzz(func(t *testing.T, line, cwd string) {
		for _, r := range RunsOf(line, cwd, []string{"go", "test"}) {
			if len(r.Prog) < 2 {
				t.Fatalf("run %q is shorter than what was wanted", r.Prog)
			}
			if r.Dir != "" && !strings.HasPrefix(r.Dir, "/") {
				t.Fatalf("relative dir %q", r.Dir)
			}
		}
		for _, c := range Parse(line) {
			for _, p := range c.Programs() {
				_ = MoveOf(p)
				_, _ = RunDir(p)
			}
		}
	})
}
