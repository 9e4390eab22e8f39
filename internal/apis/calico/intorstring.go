package calico

import "k8s.io/apimachinery/pkg/util/intstr"

// intOrString is Calico's numorstring (a protocol name or number, a port or a
// named port or a "min:max" range); intstr has the same JSON shape.
type intOrString = intstr.IntOrString
