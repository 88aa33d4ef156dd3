// Package static embeds the app's stylesheets and JavaScript modules and
// names each by its content: /static/css/app.3f2a9c1d0b.css changes when the
// file does, so it can be cached for a year (immutable), while the plain
// name (/static/css/app.css) keeps working, briefly cached, for pages
// rendered before a deploy. Pages link the hashed names through URL.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
)

// FS holds css/ and js/ (paths relative to this directory).
//
//go:embed css js
var FS embed.FS

// Asset is one embedded file.
type Asset struct {
	Name   string // "css/app.css"
	Hashed string // "css/app.3f2a9c1d0b.css"
	Hash   string // the content hash in Hashed (10 hex digits of SHA-256)
	Data   []byte
}

var (
	byName   = map[string]*Asset{} // plain name -> asset
	byHashed = map[string]*Asset{} // hashed name -> asset
)

func init() {
	err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		h := hex.EncodeToString(sum[:5])
		ext := path.Ext(p)
		a := &Asset{Name: p, Hashed: strings.TrimSuffix(p, ext) + "." + h + ext, Hash: h, Data: data}
		byName[p], byHashed[a.Hashed] = a, a
		return nil
	})
	if err != nil {
		panic("static: read the embedded files: " + err.Error())
	}
}

// URL is the content-hashed URL of the embedded file name ("css/app.css"
// gives "/static/css/app.3f2a9c1d0b.css"); an unknown name gives its plain
// URL, which answers 404.
func URL(name string) string {
	if a, ok := byName[name]; ok {
		return "/static/" + a.Hashed
	}
	return "/static/" + name
}

// Lookup finds the file a path under /static names ("css/app.css" or
// "css/app.3f2a9c1d0b.css"); hashed is true for a content-hashed name.
func Lookup(name string) (a *Asset, hashed bool, ok bool) {
	if a, ok := byHashed[name]; ok {
		return a, true, true
	}
	a, ok = byName[name]
	return a, false, ok
}
