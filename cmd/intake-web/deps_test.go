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

const modulePath = "github.com/clinical-intake/intake-web"

// docs/architecture.md states which packages of this module each package may
// import, in its "may import" table. This checks every package's imports
// (go list, test files aside) against the table, so the rules the docs
// state are the rules the code keeps: an import the table does not allow,
// or a package the table does not name, fails.
func TestDependencyRulesHold(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	rules := dependencyRules(t, root)

	pkgs := 0
	imports, _ := goListImports(t, root)
	for pkg, deps := range imports {
		pkgs++
		rule, ok := ruleFor(rules, pkg)
		if !ok {
			t.Errorf("%s has no row in docs/architecture.md's dependency table", pkg)
			continue
		}
		for _, imp := range deps {
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
	code := regexp.MustCompile("`([^`]+)`")
	var rules []rule
	for _, cells := range docTable(t, root, "| package | may import (of this module) |") {
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
			t.Fatalf("a row of the dependency table names no package: %q", strings.Join(cells, "|"))
		}
		rules = append(rules, r)
	}
	if len(rules) < 10 {
		t.Fatalf("read %d rows of the dependency table", len(rules))
	}
	return rules
}

// docs/architecture.md's role table says which role each folder holds
// (core, service, adapter, web, sandbox) and which roles of bff each role
// may import. This checks every package of bff, web and the sandbox
// against it, so the folder a package sits in says what it may depend on:
// a package under bff/ in no role's folders, an adapter importing a
// service, or the core importing an adapter fails.
func TestFoldersTellRoles(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	roles := roleTable(t, root)
	roleOf := func(pkg string) (string, bool) {
		// The longest pattern wins: bff/services/... over bff.
		best, bestLen := "", -1
		for name, r := range roles {
			for _, p := range r.folders {
				if matches(p, pkg) && len(p) > bestLen {
					best, bestLen = name, len(p)
				}
			}
		}
		return best, bestLen >= 0
	}

	imports, others := goListImports(t, root)
	checked := 0
	for pkg, deps := range imports {
		role, ok := roleOf(pkg)
		if role == "core" && !strings.HasSuffix(pkg, "test") { // test kits aside
			// The core touches no network and no database.
			for _, imp := range others[pkg] {
				if slices.ContainsFunc(noCoreImports, func(p string) bool { return imp == p || strings.HasPrefix(imp, p+"/") }) {
					t.Errorf("%s (core) imports %s: the core touches no network and no database", pkg, imp)
				}
			}
		}
		if !ok {
			if matches("bff/...", pkg) {
				t.Errorf("%s is in no role's folders of docs/architecture.md's role table", pkg)
			}
			continue
		}
		checked++
		for _, imp := range deps {
			if !matches("bff/...", imp) {
				continue // the rest is the dependency table's
			}
			impRole, ok := roleOf(imp)
			if !ok {
				continue // reported as a package of its own
			}
			if !slices.Contains(roles[role].may, impRole) {
				t.Errorf("%s (%s) imports %s (%s): the role table lets %s import only %v of bff",
					pkg, role, imp, impRole, role, roles[role].may)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d packages: the test no longer sees the module", checked)
	}
}

// noCoreImports are the packages (and those below them) through which a
// program reaches a network, a database or another process.
var noCoreImports = []string{"net", "database/sql", "os/exec", "github.com/jackc/pgx/v5", "modernc.org/sqlite"}

type role struct {
	folders []string // "dir/..." or exact paths
	may     []string // roles of bff it may import
}

func roleTable(t *testing.T, root string) map[string]role {
	t.Helper()
	code := regexp.MustCompile("`([^`]+)`")
	roles := map[string]role{}
	for _, cells := range docTable(t, root, "| role | folders | may import, of `bff` |") {
		var r role
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			r.folders = append(r.folders, m[1])
		}
		for _, name := range strings.Split(cells[3], ",") {
			if name = strings.TrimSpace(name); name != "" && name != "none" {
				r.may = append(r.may, name)
			}
		}
		roles[strings.TrimSpace(cells[1])] = r
	}
	for _, want := range []string{"core", "service", "adapter", "web", "sandbox"} {
		if len(roles[want].folders) == 0 {
			t.Fatalf("the role table has no folders for %q", want)
		}
	}
	return roles
}

// goListImports is every package of the module (test files aside, but for
// a package of tests only) with the
// packages of the module it imports, paths relative to the module, and
// with the other packages it imports (the standard library, other modules).
func goListImports(t *testing.T, root string) (module, others map[string][]string) {
	t.Helper()
	// A package of test files only (e2e) is checked on its tests' imports:
	// otherwise its row would be checked against nothing.
	cmd := exec.Command("go", "list", "-f",
		"{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{if not .GoFiles}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}{{end}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, modulePath), "/") }
	module, others = map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		module[pkg], others[pkg] = nil, nil
		for _, imp := range fields[1:] {
			if imp == modulePath || strings.HasPrefix(imp, modulePath+"/") {
				module[pkg] = append(module[pkg], rel(imp))
			} else {
				others[pkg] = append(others[pkg], imp)
			}
		}
	}
	return module, others
}

// docTable returns the rows of the table of docs/architecture.md whose
// header line is header, each row split at its "|" (cells[1] is the first
// column); the test fails when the table is gone.
func docTable(t *testing.T, root, header string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, header)
	if start < 0 {
		t.Fatalf("docs/architecture.md has no table %q", header)
	}
	table := doc[start:]
	if end := strings.Index(table, "\n\n"); end > 0 {
		table = table[:end]
	}
	columns := strings.Count(header, "|") + 1
	var rows [][]string
	for _, line := range strings.Split(table, "\n")[2:] {
		if cells := strings.Split(line, "|"); len(cells) == columns {
			rows = append(rows, cells)
		}
	}
	return rows
}
