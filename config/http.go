package config

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"

	promconfig "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"
)

// LoadHTTPClientConfig reads a file that holds one http_config mapping,
// as datasource.prometheus.http_config takes it (prometheus/common's
// HTTPClientConfig: basic_auth, authorization, oauth2, tls_config,
// http_headers, proxy_url...), with ${ENV} expanded and relative *_file
// paths resolved against the file's directory. Problems are a
// *Error with their positions; a file that cannot be read is the
// *os.PathError. `paged init --http-config` uses it.
func LoadHTTPClientConfig(path string, getenv func(string) string) (promconfig.HTTPClientConfig, error) {
	hc := promconfig.DefaultHTTPClientConfig
	data, err := readSmallFile(path)
	if err != nil {
		return hc, &Error{Problems: []Problem{{File: path, Message: "cannot read: " + err.Error()}}}
	}
	d := &decoder{file: path, data: data, fromEnv: map[*yaml.Node]bool{}, failed: map[*yaml.Node]bool{}}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return hc, &Error{Problems: []Problem{yamlSyntaxProblem(path, data, err)}}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "expected an http_config mapping (basic_auth, authorization, tls_config, http_headers...), got %s", kindName(root))
		return hc, &Error{Problems: d.problems}
	}
	if getenv != nil {
		d.expand(root, getenv, "")
	}
	d.httpClientConfig(root, "", filepath.Dir(path), &hc)
	if len(d.problems) > 0 {
		sortProblems(d.problems, path)
		return hc, &Error{Problems: d.problems}
	}
	return hc, nil
}
