package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/templates"
)

// refuseStart shows the index again with the form as typed and errs
// beside their fields, with status; a suite file's problems are listed
// under the upload field.
func (s *Server) refuseStart(c *fiber.Ctx, in startInput, status int, errs templates.FieldErrors, problems ...templates.SuiteProblem) error {
	p, err := s.scenariosPage(c, in, "", "")
	if err != nil {
		return err
	}
	p.Errors, p.Upload.Problems = errs, problems
	return render(c, status, templates.ScenariosPageView(p))
}

// invalidField is the field and message of an EINVALID error; ok is false
// for any other error.
func invalidField(err error) (field, msg string, ok bool) {
	var be *bff.Error
	if errors.As(err, &be) && be.Code == bff.EINVALID {
		return be.Field, be.Message, true
	}
	return "", "", false
}

// startScenarioRun starts a run: of a built-in suite (the estimate page's
// form) or of a suite file (multipart, at most uploadLimit). Refused
// forms come back on the index with the error beside the field, and a
// suite file's problems listed one a line.
func (s *Server) startScenarioRun(c *fiber.Ctx) error {
	in := startInput{suite: utils.CopyString(c.FormValue("suite")), repeats: utils.CopyString(c.FormValue("repeats")), label: utils.CopyString(c.FormValue("label"))}.withVariations(c)
	in.upload = strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEMultipartForm)
	f, errs := in.form()
	if errs != nil {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, errs)
	}
	if in.upload {
		fh, err := c.FormFile("upload")
		if err != nil || fh.Filename == "" {
			return s.refuseStart(c, in, http.StatusUnprocessableEntity, in.fieldErrors("upload", "Choose a suite file to upload."))
		}
		if limit := s.uploadLimit(); fh.Size > int64(limit) {
			return s.refuseStart(c, in, http.StatusRequestEntityTooLarge,
				in.fieldErrors("upload", uploadTooLarge(fh.Size, limit)))
		}
		file, err := fh.Open()
		if err != nil {
			return fmt.Errorf("open uploaded suite: %w", err)
		}
		data, err := io.ReadAll(file) // fh.Size is what the parser read: at most uploadLimit
		_ = file.Close()
		if err != nil {
			return fmt.Errorf("read uploaded suite: %w", err)
		}
		f.Upload, f.UploadName, f.Suite = data, filepath.Base(utils.CopyString(fh.Filename)), ""
	}
	run, est, err := s.deps.Scenarios.StartRun(c.UserContext(), clinicianOf(c), f)
	if field, msg, ok := invalidField(err); ok {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, in.fieldErrors(field, msg), suiteProblems(err)...)
	} else if err != nil {
		return err
	}
	if est != nil {
		s.setFlash(c, estimateSentence(est))
	} else {
		s.setFlash(c, "Run started.")
	}
	return c.Redirect(runPath(run.ID), http.StatusSeeOther)
}

// uploadLimit is the largest suite file taken: scenarios.MaxFileBytes (the
// command line's limit too), or less when the server's body limit
// (HTTP_MAX_BODY_BYTES) leaves less room beside the form's other fields. A
// body over the server's limit is refused by the server itself (413)
// before any handler runs; its page then says this limit too.
func (s *Server) uploadLimit() int {
	return max(min(scenarios.MaxFileBytes, s.cfg.Limits.MaxBodyBytes-uploadFormRoom), 0)
}

// uploadFormRoom is what the upload form's other fields and its multipart
// framing may take of the server's body limit.
const uploadFormRoom = 4 << 10

// uploadTooLarge is the upload field's error for a file of size bytes (0:
// not known, as in the sentence the page's script shows before sending).
func uploadTooLarge(size int64, limit int) string {
	is := "too large"
	if size > 0 {
		is = sizeText(size)
	}
	return fmt.Sprintf("The suite file is %s: at most %s is accepted. Split the suite into smaller files.", is, sizeText(int64(limit)))
}

// sizeText is a size for people: "1 MiB", "252 KiB", "1.3 MiB".
func sizeText(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n < 1<<20:
		return strconv.FormatInt((n+1023)>>10, 10) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
