package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/architecture.md describes the layout twice: the picture of the
// system (every package of bff/ in it) and the "Where to find things"
// table (every path in it exists). A package added without a word there,
// or a file moved, fails here.
func TestArchitectureDocDescribesTheLayout(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)

	// The picture: " │   services/ …" under " │ bff/ …", and
	// " │     intakes/ …" under it: every folder of bff/ and of its role
	// folders (services/, adapters/) is named, at its depth.
	pic := doc[strings.Index(doc, "```")+3:]
	pic = pic[:strings.Index(pic, "```")]
	inPicture := map[string]bool{}
	parent := ""
	for _, m := range regexp.MustCompile(`(?m)^ │ ( {2}| {4})([a-z]+)/ `).FindAllStringSubmatch(pic, -1) {
		if len(m[1]) == 2 {
			parent = "bff/" + m[2]
			inPicture[parent] = true
		} else {
			inPicture[parent+"/"+m[2]] = true
		}
	}
	var folders []string
	for _, dir := range []string{"bff", "bff/services", "bff/adapters"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				folders = append(folders, dir+"/"+e.Name())
			}
		}
	}
	if len(folders) < 15 {
		t.Fatalf("found %d folders under bff/: the test no longer reads the tree", len(folders))
	}
	for _, f := range folders {
		if !inPicture[f] {
			t.Errorf("%s/ is not in the picture of the system", f)
		}
		delete(inPicture, f)
	}
	for name := range inPicture {
		t.Errorf("the picture names %s/, which does not exist", name)
	}
	for _, m := range regexp.MustCompile(`(?m)^ │ ((?:cmd|web|templates|static|bff)[a-z/-]*)`).FindAllStringSubmatch(pic, -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("the picture names %s: %v", m[1], err)
		}
	}

	// The table: every `path` of its "where" column.
	table := doc[strings.Index(doc, "| behaviour | where |"):]
	if end := strings.Index(table, "\n\n"); end > 0 {
		table = table[:end]
	}
	paths := 0
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[2], -1) {
			p := strings.ReplaceAll(m[1], "<action>", "*")
			matches, _ := filepath.Glob(filepath.Join(root, p))
			if len(matches) == 0 {
				t.Errorf("%q in the table: no such file or folder", m[1])
			}
			paths++
		}
	}
	if paths < 30 {
		t.Fatalf("read %d paths from the table: the test no longer finds it", paths)
	}
}
