package host

import "testing"

func TestVersionsCompareByMajorAndMinor(t *testing.T) {
	tests := []struct {
		name, v string
		want    bool
	}{
		{"the same minor counts", "v1.35.0", true},
		{"a later minor counts", "v1.37.2", true},
		{"an earlier minor does not", "v1.34.9", false},
		{"a version without v reads too", "1.36.1", true},
		{"an unreadable version counts as new", "latest", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionAtLeast(tt.v, 1, 35); got != tt.want {
				t.Errorf("versionAtLeast(%q, 1, 35) = %v, want %v", tt.v, got, tt.want)
			}
		})
	}
}

func TestContainerdPinsThePauseImageOfItsRelease(t *testing.T) {
	tests := []struct{ name, version, want string }{
		{"containerd 1.7 pins pause 3.8", "1.7.20", "registry.k8s.io/pause:3.8"},
		{"containerd 2.1 pins pause 3.10", "2.1.4", "registry.k8s.io/pause:3.10"},
		{"containerd 2.2 pins pause 3.10.1", "2.2.2", "registry.k8s.io/pause:3.10.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sandboxImage(tt.version); got != tt.want {
				t.Errorf("sandboxImage(%q) = %q, want %q", tt.version, got, tt.want)
			}
		})
	}
}

func TestTheCRIEndpointIsWhatCrictlAndTheKubeletName(t *testing.T) {
	if got := containerdConfig("windows", "2.2.2").Endpoint(); got != "npipe://./pipe/containerd-containerd" {
		t.Errorf("Windows endpoint %q", got)
	}
	if got := containerdConfig("linux", "2.2.2").Endpoint(); got != "unix:///run/containerd/containerd.sock" {
		t.Errorf("Linux endpoint %q", got)
	}
}
