package templates

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// doc is a rendered component parsed the way a browser parses it.
type doc struct {
	t    *testing.T
	src  string
	root *html.Node
}

func render(t *testing.T, c templ.Component) *doc {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	src := b.String()
	root, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return &doc{t: t, src: src, root: root}
}

// renderFragment parses a fragment as app.js does (innerHTML of a
// <template>, which for these elements parses like a <body>).
func renderFragment(t *testing.T, c templ.Component) *doc {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	ctx := &html.Node{Type: html.ElementNode, Data: "template", DataAtom: atom.Template}
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(b.String()), body)
	if err != nil {
		t.Fatalf("parse fragment: %v", err)
	}
	for _, n := range nodes {
		ctx.AppendChild(n)
	}
	return &doc{t: t, src: b.String(), root: ctx}
}

func attr(n *html.Node, key string) (string, bool) {
	if n == nil {
		return "", false
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attrOr(n *html.Node, key string) string {
	v, _ := attr(n, key)
	return v
}

// all returns every element under root for which match is true, in document order.
func all(root *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

func (d *doc) all(match func(*html.Node) bool) []*html.Node { return all(d.root, match) }

func (d *doc) byID(id string) *html.Node {
	ns := d.all(func(n *html.Node) bool { return attrOr(n, "id") == id })
	if len(ns) > 1 {
		d.t.Errorf("id %q is used %d times", id, len(ns))
	}
	if len(ns) == 0 {
		return nil
	}
	return ns[0]
}

func (d *doc) mustID(id string) *html.Node {
	d.t.Helper()
	n := d.byID(id)
	if n == nil {
		d.t.Fatalf("no element with id %q in:\n%s", id, d.src)
	}
	return n
}

func tag(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == name }
}

func withAttr(key, val string) func(*html.Node) bool {
	return func(n *html.Node) bool { v, ok := attr(n, key); return ok && v == val }
}

func and(fs ...func(*html.Node) bool) func(*html.Node) bool {
	return func(n *html.Node) bool {
		for _, f := range fs {
			if !f(n) {
				return false
			}
		}
		return true
	}
}

// text is the node's text content as the DOM's textContent gives it.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// norm collapses whitespace, as accessible names are computed.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// visible reports whether no ancestor-or-self is hidden from everyone
// (hidden attribute, or class visually-hidden which is still read, so it
// counts as visible for names).
func hiddenAttr(n *html.Node) bool {
	for ; n != nil; n = n.Parent {
		if _, ok := attr(n, "hidden"); ok {
			return true
		}
	}
	return false
}

// labelFor returns the control a <label> with exactly (or starting with)
// the given text names.
func (d *doc) labelled(name string, prefix bool) *html.Node {
	d.t.Helper()
	for _, l := range d.all(tag("label")) {
		got := norm(text(l))
		if got == name || (prefix && strings.HasPrefix(got, name)) {
			id := attrOr(l, "for")
			if id == "" {
				d.t.Fatalf("label %q has no for=", got)
			}
			c := d.byID(id)
			if c == nil {
				d.t.Fatalf("label %q points at missing #%s", got, id)
			}
			return c
		}
	}
	d.t.Fatalf("no label %q in:\n%s", name, d.src)
	return nil
}

// buttons returns the submit buttons whose text is name.
func (d *doc) buttons(root *html.Node, name string) []*html.Node {
	if root == nil {
		root = d.root
	}
	return all(root, func(n *html.Node) bool {
		return n.Data == "button" && norm(text(n)) == name
	})
}

func ancestor(n *html.Node, match func(*html.Node) bool) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && match(p) {
			return p
		}
	}
	return nil
}

// describedByIDs is the id list of aria-describedby.
func describedByIDs(n *html.Node) []string { return strings.Fields(attrOr(n, "aria-describedby")) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
