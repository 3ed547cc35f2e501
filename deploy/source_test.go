package deploy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// The services are modules this one may not import (scripts/check-modules.sh):
// what the manifests must agree with is read from their source instead.

// repo is the repository's root, seen from this module.
const repo = ".."

// serviceConfigKeys returns the mapstructure keys of a service's Config
// (services/<name>/<name>.go): the keys its section of claimcheck.yaml may
// hold.
func serviceConfigKeys(name string) (map[string]bool, error) {
	f, err := parseGo(filepath.Join(repo, "services", name, name+".go"))
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Config" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, fld := range st.Fields.List {
			if fld.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(fld.Tag.Value)
			if k := reflect.StructTag(tag).Get("mapstructure"); k != "" && k != "-" {
				keys[k] = true
			}
		}
		return false
	})
	if len(keys) == 0 {
		return nil, fmt.Errorf("services/%s: no Config with mapstructure keys found", name)
	}
	return keys, nil
}

// stringConst returns the value of the string constant name declared in file.
func stringConst(file, name string) (string, error) {
	f, err := parseGo(file)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != name || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					return strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return "", fmt.Errorf("%s: no string constant %s", file, name)
}

// exportedMetrics returns every metric name the services register through
// telemetry.NewMetrics(reg, "<service>") and its Counter, CounterVec,
// Histogram and HistogramVec (claimcheck_<service>_<name>; a histogram's
// _bucket, _sum and _count series too).
func exportedMetrics() (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(repo, "services", "*", "*.go"))
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parseGo(file)
		if err != nil {
			return nil, err
		}
		prefix := ""
		var made []*ast.CallExpr
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch sel.Sel.Name {
			case "NewMetrics":
				if len(call.Args) == 2 {
					prefix = "claimcheck_" + stringLit(call.Args[1]) + "_"
				}
			case "Counter", "CounterVec", "Histogram", "HistogramVec":
				made = append(made, call)
			}
			return true
		})
		if prefix == "" {
			continue
		}
		for _, call := range made {
			sel := call.Fun.(*ast.SelectorExpr)
			name := prefix + stringLit(call.Args[0])
			names[name] = true
			if strings.HasPrefix(sel.Sel.Name, "Histogram") {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					names[name+s] = true
				}
			}
		}
	}
	return names, nil
}

func stringLit(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s, _ := strconv.Unquote(lit.Value)
		return s
	}
	return ""
}

func parseGo(file string) (*ast.File, error) {
	return parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
}

var natsServerRequire = regexp.MustCompile(`(?m)^\s*github\.com/nats-io/nats-server/v2 v(\S+)`)

// natsServerVersion is the nats-server version claimcheck is built and
// tested with (pkg/go.mod).
func natsServerVersion() (string, error) {
	raw, err := os.ReadFile(filepath.Join(repo, "pkg", "go.mod"))
	if err != nil {
		return "", err
	}
	m := natsServerRequire.FindSubmatch(raw)
	if m == nil {
		return "", fmt.Errorf("pkg/go.mod requires no github.com/nats-io/nats-server/v2")
	}
	return string(m[1]), nil
}
