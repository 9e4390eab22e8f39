package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// goreleaserConfig is the part of .goreleaser.yaml the tests hold to the
// code and to the krew manifest.
type goreleaserConfig struct {
	Version int `json:"version"`
	Builds  []struct {
		Main    string   `json:"main"`
		Binary  string   `json:"binary"`
		Ldflags []string `json:"ldflags"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
	} `json:"builds"`
	Archives []struct {
		NameTemplate    string   `json:"name_template"`
		Formats         []string `json:"formats"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
	} `json:"archives"`
}

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	// Not strict: the tests read only the sections above.
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if c.Version != 2 || len(c.Builds) != 1 || len(c.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml: want version 2 with one build and one archive, got version %d, %d builds, %d archives", c.Version, len(c.Builds), len(c.Archives))
	}
	return c
}

// releaseArchive is the file name GoReleaser gives the archive of one
// platform for a tag, from the configuration's name template and formats.
func releaseArchive(t *testing.T, c goreleaserConfig, tag, goos, goarch string) string {
	t.Helper()
	a := c.Archives[0]
	tmpl, err := template.New("name").Parse(a.NameTemplate)
	if err != nil {
		t.Fatalf("archive name_template: %v", err)
	}
	var name bytes.Buffer
	if err := tmpl.Execute(&name, map[string]string{"Tag": tag, "Version": strings.TrimPrefix(tag, "v"), "Os": goos, "Arch": goarch}); err != nil {
		t.Fatalf("archive name_template: %v", err)
	}
	formats := a.Formats
	for _, o := range a.FormatOverrides {
		if o.Goos == goos {
			formats = o.Formats
		}
	}
	if len(formats) != 1 {
		t.Fatalf("%s: want one archive format, got %v", goos, formats)
	}
	return name.String() + "." + formats[0]
}

// krewPlugin is the part of a krew Plugin (krew's pkg/index types) the
// tests read.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// renderKrew renders deploy/krew/hybrid.yaml as krew-release-bot does for
// a release, except that the checksum is the URL's, not the archive's:
// the bot downloads the archive, the test has none.
func renderKrew(t *testing.T, tag string) []byte {
	t.Helper()
	const file = "../../deploy/krew/hybrid.yaml"
	funcs := template.FuncMap{
		// The bot's addURIAndSha renders the URL with the tag and returns
		// "uri: URL\n    sha256: SUM", indented for a platform entry.
		"addURIAndSha": func(url, tag string) (string, error) {
			u, err := template.New("url").Parse(url)
			if err != nil {
				return "", err
			}
			var b bytes.Buffer
			if err := u.Execute(&b, map[string]string{"TagName": tag}); err != nil {
				return "", err
			}
			return fmt.Sprintf("uri: %s\n    sha256: %x", b.String(), sha256.Sum256(b.Bytes())), nil
		},
	}
	tmpl, err := template.New(filepath.Base(file)).Funcs(funcs).ParseFiles(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, map[string]string{"TagName": tag}); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return out.Bytes()
}

func TestTheKrewManifestParsesAsAPluginOnceRendered(t *testing.T) {
	var p krewPlugin
	if err := yaml.UnmarshalStrict(renderKrew(t, "v1.2.3"), &p); err != nil {
		t.Fatalf("the rendered krew manifest is not a Plugin: %v", err)
	}
	for _, c := range []struct{ what, got, want string }{
		{"apiVersion", p.APIVersion, "krew.googlecontainertools.github.com/v1alpha2"},
		{"kind", p.Kind, "Plugin"},
		// kubectl runs `kubectl hybrid` as kubectl-hybrid.
		{"metadata.name", p.Metadata.Name, "hybrid"},
		{"spec.version", p.Spec.Version, "v1.2.3"},
	} {
		if c.got != c.want {
			t.Errorf("%s is %q, want %q", c.what, c.got, c.want)
		}
	}
	if p.Spec.ShortDescription == "" || p.Spec.Homepage == "" {
		t.Errorf("the manifest has no shortDescription or homepage, which krew-index requires")
	}
}

func TestTheKrewManifestNamesEveryPlatformTheReleaseBuildsWithItsArchive(t *testing.T) {
	const tag = "v1.2.3"
	c := readGoreleaser(t)
	var p krewPlugin
	if err := yaml.UnmarshalStrict(renderKrew(t, tag), &p); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, goos := range c.Builds[0].Goos {
		for _, goarch := range c.Builds[0].Goarch {
			want[goos+"/"+goarch] = true
		}
	}
	if len(want) < 6 {
		t.Errorf("the release builds %d platforms, want Linux, macOS and Windows on amd64 and arm64", len(want))
	}
	got := map[string]bool{}
	for _, pl := range p.Spec.Platforms {
		goos, goarch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		platform := goos + "/" + goarch
		t.Run(platform, func(t *testing.T) {
			if got[platform] {
				t.Errorf("named twice")
			}
			got[platform] = true
			if !want[platform] {
				t.Fatalf("the release does not build it")
			}
			prefix := "https://github.com/kubectl-hybrid/kubectl-hybrid/releases/download/" + tag + "/"
			if archive := releaseArchive(t, c, tag, goos, goarch); pl.URI != prefix+archive {
				t.Errorf("uri is %q, want the release's archive %q", pl.URI, prefix+archive)
			}
			if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(pl.Sha256) {
				t.Errorf("sha256 is %q", pl.Sha256)
			}
			bin := c.Builds[0].Binary
			if goos == "windows" {
				bin += ".exe"
			}
			if pl.Bin != bin {
				t.Errorf("bin is %q, want %q", pl.Bin, bin)
			}
		})
	}
	for platform := range want {
		if !got[platform] {
			t.Errorf("the release builds %s and the krew manifest does not name it", platform)
		}
	}
}

// TestTheReleaseInjectsTheVersionIntoAVariableTheCodeHas: -X sets only a
// package-level string variable (cmd/link); a name that does not exist is
// silently ignored, and version would print v0.0.0-dev.
func TestTheReleaseInjectsTheVersionIntoAVariableTheCodeHas(t *testing.T) {
	c := readGoreleaser(t)
	const module = "github.com/kubectl-hybrid/kubectl-hybrid"
	x := regexp.MustCompile(`-X[= ]([^= ]+)\.([A-Za-z_][A-Za-z0-9_]*)=(\S+)`)
	var found int
	for _, flags := range c.Builds[0].Ldflags {
		for _, m := range x.FindAllStringSubmatch(flags, -1) {
			pkg, name := m[1], m[2]
			found++
			t.Run(pkg+"."+name, func(t *testing.T) {
				rel, ok := strings.CutPrefix(pkg, module+"/")
				if !ok {
					t.Fatalf("%s is not a package of %s", pkg, module)
				}
				if !packageHasStringVar(t, filepath.Join("..", "..", filepath.FromSlash(rel)), name) {
					t.Errorf("package %s has no package-level string variable %s for -X to set", pkg, name)
				}
			})
		}
	}
	if found == 0 {
		t.Fatalf("the release's ldflags set no variable with -X: %q", c.Builds[0].Ldflags)
	}
	if !slices.ContainsFunc(c.Builds[0].Ldflags, func(f string) bool {
		return strings.Contains(f, path.Join(module, "internal/cli")+".Version=")
	}) {
		t.Errorf("the release's ldflags do not set internal/cli.Version, which version prints")
	}
	if c.Builds[0].Main != "./cmd/kubectl-hybrid" {
		t.Errorf("the release builds %q, want ./cmd/kubectl-hybrid", c.Builds[0].Main)
	}
}

// packageHasStringVar says whether the package in dir declares name as a
// package-level variable of type string that is not set by a call (-X
// ignores a variable initialised by a function call).
func packageHasStringVar(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name {
						continue
					}
					typed := false
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" {
						typed = true
					}
					if i < len(vs.Values) {
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							return false
						}
						typed = typed || vs.Type == nil
					}
					return typed
				}
			}
		}
	}
	return false
}

func TestTheReleaseVariableCheckRefusesWhatLdflagsCannotSet(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"an empty string variable", "var Version = \"\"", true},
		{"a typed string variable", "var Version string", true},
		{"one of a group", "var (\n\tOther = 1\n\tVersion = \"x\"\n)", true},
		{"a variable set by a call", "var Version = f()\nfunc f() string { return \"\" }", false},
		{"an int variable", "var Version = 1", false},
		{"a constant", "const Version = \"\"", false},
		{"another name", "var Revision = \"\"", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "v.go"), []byte("package p\n\n"+c.src+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := packageHasStringVar(t, dir, "Version"); got != c.want {
				t.Errorf("packageHasStringVar = %v, want %v", got, c.want)
			}
		})
	}
}

// The README's install instructions name the Go version go.mod requires
// (an older go fetches a newer toolchain or refuses) and the command's
// real import path.
func TestTheReadmeDocsTheGoVersionAndInstallPathOfGoMod(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	modLine := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(mod)
	if goLine == nil || modLine == nil {
		t.Fatal("go.mod has no go or module line")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	goVersions := regexp.MustCompile(`Go (1\.\d+(?:\.\d+)?) or newer`).FindAllSubmatch(readme, -1)
	if len(goVersions) == 0 {
		t.Errorf("the README names no Go version (\"Go 1.x.y or newer\")")
	}
	for _, v := range goVersions {
		if string(v[1]) != string(goLine[1]) {
			t.Errorf("the README says Go %s or newer, go.mod requires go %s", v[1], goLine[1])
		}
	}
	install := "go install " + string(modLine[1]) + "/cmd/kubectl-hybrid@latest"
	if !bytes.Contains(readme, []byte("\n"+install+"\n")) {
		t.Errorf("the README does not document %q", install)
	}
	if _, err := os.Stat("../../cmd/kubectl-hybrid/main.go"); err != nil {
		t.Errorf("the installed command is not at cmd/kubectl-hybrid: %v", err)
	}
}
