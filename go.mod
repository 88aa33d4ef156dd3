module github.com/clinical-intake/intake-web

go 1.26.8
