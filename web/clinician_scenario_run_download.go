package web

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"
)

func reportName(id, ext string) string { return "scenario-run-" + id + "-report." + ext }

// downloadScenarioJSON is the run's report (scenarios.Report) as JSON.
func (s *Server) downloadScenarioJSON(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	rep, err := s.deps.Scenarios.Report(c.UserContext(), id)
	if err != nil {
		return err
	}
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode scenario report: %w", err)
	}
	return sendDownload(c, fiber.MIMEApplicationJSONCharsetUTF8, reportName(id, "json"), body)
}

// downloadScenarioCSV is the run's results, one row each (Report.WriteCSV).
func (s *Server) downloadScenarioCSV(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	rep, err := s.deps.Scenarios.Report(c.UserContext(), id)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		return err
	}
	return sendDownload(c, "text/csv; charset=utf-8", reportName(id, "csv"), buf.Bytes())
}

// sendDownload sends body as an attachment; name is built from a checked
// run id, so it needs no quoting beyond the quotes.
func sendDownload(c *fiber.Ctx, contentType, name string, body []byte) error {
	c.Set(fiber.HeaderContentType, contentType)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(body) // ours, not pooled
}
