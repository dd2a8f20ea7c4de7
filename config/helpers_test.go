package config

import (
	"os"
	"testing"

	"github.com/pagedhq/paged/internal/testbin"
)

// writeFile writes a file of a test's configuration under dir.
var writeFile = testbin.WriteFile

// basicRules is a valid rule file, for configurations that name one.
var basicRules = func() string {
	b, err := os.ReadFile("testdata/rules/basic.rules.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// Redacted2 is Redacted for tests: it fails the test on error.
func (c *Config) Redacted2(t *testing.T) string {
	t.Helper()
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	return y
}
