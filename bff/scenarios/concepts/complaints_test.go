package concepts

import (
	"path/filepath"
	"testing"
)

type complaintsFile struct {
	Lists map[string][]string `yaml:"lists"`
	Cases []struct {
		Complaint string `yaml:"complaint"`
		List      string `yaml:"list"`
		Want      string `yaml:"want"`
	} `yaml:"cases"`
}

// Each area of the complaints corpus is found in the words of both sides:
// the patient's way of naming its problem and every engine's title for it
// (the patient's pick itself is tested in package scenarios, which reads
// the same corpus).
func TestComplaintAreas(t *testing.T) {
	u, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var cf complaintsFile
	decodeStrict(t, filepath.Join("testdata", "complaints.yaml"), &cf)
	for name, list := range cf.Lists {
		for _, title := range list {
			if len(u.Areas(title)) == 0 {
				t.Errorf("list %s: title %q names no area", name, title)
			}
		}
	}
	for _, c := range cf.Cases {
		if _, ok := cf.Lists[c.List]; !ok {
			t.Errorf("%q: no list %q", c.Complaint, c.List)
		}
		if len(u.Areas(c.Complaint)) == 0 && c.Want != "" {
			t.Errorf("%q names no area", c.Complaint)
		}
	}
}
