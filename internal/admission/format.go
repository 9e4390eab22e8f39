package admission

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FormatInvalid returns exactly what kubectl writes to stderr when the API
// server refuses an object of the given kind and name with errs: the errors
// become an Invalid StatusError (apimachinery NewInvalid, as the registry
// does), which kubectl prints as
//
//	The Pod "bad" is invalid: spec.os: Unsupported value: ...
//
// for one error, or, for several,
//
//	The Pod "bad" is invalid: <space><newline>
//	* spec.securityContext.seccompProfile: Forbidden: cannot be set for a windows pod
//	* spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod
//
// The result always ends with a newline, as kubectl's output does. With no
// errors it returns "".
func FormatInvalid(kind, name string, errs field.ErrorList) string {
	if len(errs) == 0 {
		return ""
	}
	return FormatError(apierrors.NewInvalid(schema.GroupKind{Kind: kind}, name, errs))
}

// FormatError renders any error the way kubectl's cmdutil.CheckErr does
// (staging/src/k8s.io/kubectl/pkg/cmd/util/helpers.go checkErr and
// StandardErrorMessage): Invalid status errors as in FormatInvalid, other API
// status errors as "Error from server (<Reason>): <message>", and anything
// else with an "error: " prefix. The result ends with a newline.
func FormatError(err error) string {
	if err == nil {
		return ""
	}
	var msg string
	var status apierrors.APIStatus
	switch {
	case apierrors.IsInvalid(err):
		msg = formatInvalidStatus(err)
	case errors.As(err, &status):
		s := status.Status()
		switch {
		case s.Reason == metav1.StatusReasonUnauthorized:
			msg = fmt.Sprintf("error: You must be logged in to the server (%s)", s.Message)
		case s.Reason != "":
			msg = fmt.Sprintf("Error from server (%s): %s", s.Reason, err.Error())
		default:
			msg = fmt.Sprintf("Error from server: %s", err.Error())
		}
	default:
		msg = err.Error()
		if !strings.HasPrefix(msg, "error: ") {
			msg = "error: " + msg
		}
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return msg
}

// formatInvalidStatus mirrors the IsInvalid branch of kubectl's checkErr:
// a heading from the status details, then the causes as "field: message",
// duplicates dropped, one per line when there are several.
func formatInvalidStatus(err error) string {
	heading := "The request is invalid"
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.Status().Details == nil {
		return heading
	}
	details := se.Status().Details
	if details.Kind != "" || details.Name != "" {
		heading = fmt.Sprintf("The %s %q is invalid", details.Kind, details.Name)
	}
	var lines []string
	seen := map[string]bool{}
	for _, cause := range details.Causes {
		line := fmt.Sprintf("%s: %s", cause.Field, cause.Message)
		if seen[line] {
			continue
		}
		seen[line] = true
		lines = append(lines, line)
	}
	prefix := heading + ": "
	switch len(lines) {
	case 0:
		return heading
	case 1:
		return prefix + lines[0] + "\n"
	}
	var b strings.Builder
	b.WriteString(prefix + "\n")
	for _, line := range lines {
		b.WriteString("* " + line + "\n")
	}
	return b.String()
}
