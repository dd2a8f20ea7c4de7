package examples

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The files built into the binary are the files in this directory, byte
// for byte, and none is missing: a new pack, runbook or file type that the
// embed pattern would leave out fails here.
func TestBuiltInFilesMatchDisk(t *testing.T) {
	builtin := FS()
	onDisk := map[string]bool{}
	for _, root := range []string{"packs", "runbooks", DemoConfig} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			name := filepath.ToSlash(p)
			onDisk[name] = true
			want, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got, err := fs.ReadFile(builtin, name)
			if err != nil {
				t.Errorf("%s is not built in: %v", name, err)
				return nil
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the built-in copy differs from the file", name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(onDisk) < 60 {
		t.Fatalf("only %d files found under packs/, runbooks/ and demo.yaml", len(onDisk))
	}
	err := fs.WalkDir(builtin, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !onDisk[p] {
			t.Errorf("%s is built in but not in examples/", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pack := range packs {
		if _, err := fs.Stat(builtin, "packs/"+pack+"/pack.yaml"); err != nil {
			t.Errorf("pack %s has no pack.yaml: %v", pack, err)
		}
	}
}
