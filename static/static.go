// Package static embeds the app's stylesheet and its JavaScript module.
// Serve FS under /static: /static/css/app.css and /static/js/app.js.
package static

import "embed"

// FS holds css/app.css and js/app.js (paths relative to this directory).
//
//go:embed css js
var FS embed.FS
