package engine

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Error is input the engine cannot build from: a reference to a missing
// object, a contradiction between documents. The CLI treats it as bad input.
type Error struct {
	Origin model.Origin
	Msg    string
}

func (e *Error) Error() string {
	if e.Origin.File == "" {
		return e.Msg
	}
	return e.Origin.String() + ": " + e.Msg
}

func errorAt(o model.Origin, format string, args ...any) error {
	return &Error{Origin: o, Msg: fmt.Sprintf(format, args...)}
}

// copyJSON deep-copies the project's own typed objects, which have no
// generated DeepCopy. They came from JSON, so the round trip cannot fail; if
// it ever did, a shallow copy is the safe fallback.
func copyJSON[T any](t *T) *T {
	out := new(T)
	b, err := json.Marshal(t)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		*out = *t
	}
	return out
}

// kubeadm patch files are named target[suffix][+patchtype].extension
// (kubeadm app/util/patches/patches.go); only the kubeletconfiguration target
// matters here.
var patchFile = regexp.MustCompile(`^kubeletconfiguration[^+.]*(\+(strategic|merge|json))?\.(ya?ml|json)$`)

// kubeletPatchName returns the patch's name (the file base name without
// extension) when file is a kubelet configuration patch file.
func kubeletPatchName(file string) (string, bool) {
	base := path.Base(strings.ReplaceAll(strings.TrimPrefix(file, "lab:"), `\`, "/"))
	if !patchFile.MatchString(base) {
		return "", false
	}
	return strings.TrimSuffix(base, path.Ext(base)), true
}
