package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/clinical-intake/intake-web"

// docs/architecture.md states which packages of this module each package may
// import, in its "may import" table. This checks every package's imports
// (go list, test files aside) against the table, so the rules the docs
// state are the rules the code keeps: an import the table does not allow,
// or a package the table does not name, fails.
func TestDependencyRulesHold(t *testing.T) {
	root := filepath.Join("..", "..")
	rules := dependencyRules(t, root)

	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		pkgs++
		rule, ok := ruleFor(rules, pkg)
		if !ok {
			t.Errorf("%s has no row in docs/architecture.md's dependency table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue // the standard library and other modules
			}
			imp = strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !rule.allows(imp) {
				t.Errorf("%s imports %s, which docs/architecture.md's dependency table does not allow", pkg, imp)
			}
		}
	}
	if pkgs < 20 {
		t.Fatalf("go list gave %d packages: the test no longer sees the module", pkgs)
	}
}

// rule is one row of the table: the packages it covers and what they may
// import.
type rule struct {
	pkgs    []string // exact paths, or "dir/..." for a directory and below
	allowed []string // the same, or "nothing" / "anything but X"
	except  []string // for "anything but"
	any     bool
}

func matches(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pattern == pkg
}

func (r rule) allows(imp string) bool {
	if r.any {
		return !slices.ContainsFunc(r.except, func(p string) bool { return matches(p, imp) })
	}
	return slices.ContainsFunc(r.allowed, func(p string) bool { return matches(p, imp) })
}

// ruleFor is the row naming pkg exactly, else the row whose "dir/..."
// covers it.
func ruleFor(rules []rule, pkg string) (rule, bool) {
	for _, r := range rules {
		if slices.Contains(r.pkgs, pkg) {
			return r, true
		}
	}
	for _, r := range rules {
		if slices.ContainsFunc(r.pkgs, func(p string) bool { return matches(p, pkg) }) {
			return r, true
		}
	}
	return rule{}, false
}

func dependencyRules(t *testing.T, root string) []rule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "| package | may import (of this module) |")
	if start < 0 {
		t.Fatal("docs/architecture.md has no dependency table")
	}
	table := doc[start:]
	if end := strings.Index(table, "\n\n"); end > 0 {
		table = table[:end]
	}
	code := regexp.MustCompile("`([^`]+)`")
	var rules []rule
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		var r rule
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			r.pkgs = append(r.pkgs, m[1])
		}
		may := strings.TrimSpace(cells[2])
		names := code.FindAllStringSubmatch(may, -1)
		switch {
		case strings.HasPrefix(may, "anything but"):
			r.any = true
			for _, m := range names {
				r.except = append(r.except, m[1])
			}
		case strings.HasPrefix(may, "nothing"):
		default:
			for _, m := range names {
				r.allowed = append(r.allowed, m[1])
			}
		}
		if len(r.pkgs) == 0 {
			t.Fatalf("a row of the dependency table names no package: %q", line)
		}
		rules = append(rules, r)
	}
	if len(rules) < 10 {
		t.Fatalf("read %d rows of the dependency table", len(rules))
	}
	return rules
}
