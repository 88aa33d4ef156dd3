package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// An operator matches log lines by their keys: intake_id is always the app's
// own id, encounter_id always the service's, and an error is always under
// err. This reads every log call of the app's code and checks the value
// logged under each of those keys (a line that labelled the app's id
// encounter_id sent operators to the wrong record).
func TestLogKeysMeanOneThing(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	calls := 0
	for _, dir := range []string{"bff", "web", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isLogCall(call) {
					return true
				}
				calls++
				for i, arg := range call.Args {
					key, value := logKey(call.Args, i)
					if key == "" {
						continue
					}
					where := fset.Position(arg.Pos())
					switch v := strings.ToLower(render(value)); key {
					case "encounter_id":
						if !strings.HasSuffix(v, "encounterid") {
							t.Errorf("%s: encounter_id logs %s, not the service's encounter id", where, render(value))
						}
					case "intake_id":
						if strings.Contains(v, "encounter") {
							t.Errorf("%s: intake_id logs %s, the service's encounter id", where, render(value))
						}
					case "error":
						t.Errorf("%s: an error is logged under \"error\"; the app's key is \"err\"", where)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if calls < 50 {
		t.Fatalf("found only %d log calls: the test no longer reads the code it checks", calls)
	}
}

// isLogCall reports whether call is a slog logging call (x.Info, x.Warn,
// x.Error, x.Debug with a message first, or x.Log / x.LogAttrs).
func isLogCall(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) == 0 {
		return false
	}
	switch sel.Sel.Name {
	case "Info", "Warn", "Error", "Debug", "InfoContext", "WarnContext", "ErrorContext", "DebugContext", "Log", "LogAttrs", "With":
		return true
	}
	return false
}

// logKey returns the key and value at args[i] when it starts a key/value
// pair: a string literal key followed by its value, or slog.String/Any/…
// with a literal key.
func logKey(args []ast.Expr, i int) (string, ast.Expr) {
	if lit, ok := args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING && i+1 < len(args) {
		k, _ := strconv.Unquote(lit.Value)
		return k, args[i+1]
	}
	if c, ok := args[i].(*ast.CallExpr); ok && len(c.Args) == 2 {
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "slog" {
				if lit, ok := c.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					k, _ := strconv.Unquote(lit.Value)
					return k, c.Args[1]
				}
			}
		}
	}
	return "", nil
}

// render prints the expression as written, for matching and messages.
func render(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return render(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return render(e.Fun) + "(…)"
	case *ast.BasicLit:
		return e.Value
	}
	return "?"
}
