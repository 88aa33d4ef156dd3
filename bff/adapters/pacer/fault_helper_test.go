package pacer_test

import (
	"bytes"
	"encoding/json"
	"net/http"
)

func newFaultRequest(base, encounterID, kind string) (*http.Request, error) {
	body, _ := json.Marshal(map[string]any{"encounter_id": encounterID, "kind": kind, "count": 1})
	req, err := http.NewRequest(http.MethodPost, base+"/v1/sandbox/faults", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}
