package web

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
)

// downloadHazardLog sends a version of the hazard log (?version=, the
// latest by default) as a YAML file.
func (s *Server) downloadHazardLog(c *fiber.Ctx) error {
	version := 0
	if q := c.Query("version"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 {
			return bff.Errorf(bff.EMALFORMED, "No such version of the hazard log.")
		}
		version = n
	}
	data, err := s.deps.Safety.ExportLog(c.UserContext(), version)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/yaml; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="hazard-log.yaml"`)
	return c.Send(data)
}
