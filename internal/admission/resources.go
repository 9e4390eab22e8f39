package admission

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateResources is the quantity part of validation.go
// validateResourceRequirements: no negative quantity, a request no greater
// than its limit, and for resources that cannot be overcommitted (hugepages,
// extended resources) a limit equal to the request. Upstream walks the maps
// in Go's random order; here names are sorted, so a container with several
// faulty resources lists them in a stable order the server may not share.
//
// Validation sees the pod after defaulting, which copies each limit into a
// request the container does not set (pkg/apis/core/v1/defaults.go
// SetDefaults_Pod); the requests here include those copies.
func validateResources(r *corev1.ResourceRequirements, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := fld.Child("limits"), fld.Child("requests")
	requests := defaultedRequests(r)
	for _, name := range sortedNames(r.Limits) {
		errs = append(errs, validateNonNegative(r.Limits[name], limPath.Key(string(name)))...)
	}
	for _, name := range sortedNames(requests) {
		q := requests[name]
		errs = append(errs, validateNonNegative(q, reqPath.Key(string(name)))...)
		limit, ok := r.Limits[name]
		switch {
		case ok && q.Cmp(limit) != 0 && !overcommitAllowed(name):
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !overcommitAllowed(name):
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
	}
	return errs
}

// validateNonNegative is validation.go ValidateNonnegativeQuantity.
func validateNonNegative(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than or equal to 0")}
	}
	return nil
}

// overcommitAllowed is pkg/apis/core/helper IsOvercommitAllowed: native
// resources (no domain, or the kubernetes.io domain) other than hugepages.
func overcommitAllowed(name corev1.ResourceName) bool {
	s := string(name)
	native := !strings.Contains(s, "/") || strings.Contains(s, "kubernetes.io/")
	return native && !strings.HasPrefix(s, corev1.ResourceHugePagesPrefix)
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// defaultedRequests is a container's requests after pod defaulting, which
// copies each limit into a request the container does not set
// (pkg/apis/core/v1/defaults.go SetDefaults_Pod).
func defaultedRequests(r *corev1.ResourceRequirements) corev1.ResourceList {
	requests := corev1.ResourceList{}
	for name, q := range r.Limits {
		requests[name] = q
	}
	for name, q := range r.Requests {
		requests[name] = q
	}
	return requests
}
