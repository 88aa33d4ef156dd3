package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// builtinFiles holds the built-in suite, one file per body system.
//
//go:embed builtin/*.yaml
var builtinFiles embed.FS

// BuiltinName is the name of the built-in suite.
const BuiltinName = "builtin"

// Builtin loads every embedded built-in file, in name order, into one suite
// named "builtin". Ids are unique across the files. The files are part of
// the binary, so any error is a fault of the build (the tests load them):
// an errors.Join of every *Problem, or a wrapped read error.
func Builtin() (*Suite, error) {
	return loadDir(builtinFiles, "builtin")
}

// loadDir loads every *.yaml file of dir in fsys into one suite named
// BuiltinName.
func loadDir(fsys fs.FS, dir string) (*Suite, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("scenarios: list built-in files: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("scenarios: no built-in files in %s", dir)
	}
	all := &Suite{Name: BuiltinName}
	type place struct {
		file  string
		index int
	}
	seen := map[string]place{}
	var errs []error
	for _, name := range names { // fs.Glob sorts them
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("scenarios: read %s: %w", name, err)
		}
		s, err := Load(name, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i, v := range s.Vignettes {
			if p, dup := seen[v.ID]; dup {
				errs = append(errs, &Problem{File: name, Vignette: v.ID, Index: i + 1, Field: "id",
					Rule: fmt.Sprintf("duplicate of %s vignette (%d)", p.file, p.index)})
				continue
			}
			seen[v.ID] = place{name, i + 1}
			all.Vignettes = append(all.Vignettes, v)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return all, nil
}

// BuiltinParts loads each embedded built-in file as a suite of its own,
// named "builtin/" and the file's suite name (builtin/heart_lungs), in name
// order: a smaller run for one body system. Errors as Builtin.
func BuiltinParts() ([]*Suite, error) {
	names, err := fs.Glob(builtinFiles, "builtin/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("scenarios: list built-in files: %w", err)
	}
	var out []*Suite
	for _, name := range names {
		data, err := fs.ReadFile(builtinFiles, name)
		if err != nil {
			return nil, fmt.Errorf("scenarios: read %s: %w", name, err)
		}
		s, err := Load(name, data)
		if err != nil {
			return nil, err
		}
		s.Name = BuiltinName + "/" + s.Name
		out = append(out, s)
	}
	return out, nil
}
