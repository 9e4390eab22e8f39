package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// movedAspnetappService gives the aspnetapp Service another cluster IP:
// the verification's commands that reach it must follow.
const movedAspnetappService = `apiVersion: v1
kind: Service
metadata:
  name: aspnetapp
  namespace: win-demo
spec:
  clusterIP: 10.102.98.200
  selector:
    app.kubernetes.io/name: aspnetapp
  ports:
    - name: http
      port: 80
      targetPort: http
`

// The lab's verification reads its addresses from the twin: a what-if
// that moves one moves every command and expectation that uses it, and
// the old address appears nowhere.
func TestALabWhatIfThatMovesAServiceAddressMovesTheVerification(t *testing.T) {
	for _, tc := range []struct {
		name   string
		whatIf string
		old    string
		want   []string
	}{
		{
			name:   "the aspnetapp Service gets another cluster IP",
			whatIf: movedAspnetappService,
			old:    "10.102.98.171",
			want: []string{
				"Address: 10.102.98.200\n",
				"-- curl.exe -s -o NUL -w \"%{remote_ip} %{http_code}\\n\" http://aspnetapp/\n10.102.98.200 200\n",
				`The Windows host: PS C:\> curl.exe http://10.102.98.200 on k8s-lab-win-1` + "\n  not delivered (dropped): a Windows host cannot reach ClusterIPs\n",
				"Verdict: all 8 commands answered as expected\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "what-if.yaml")
			if err := os.WriteFile(file, []byte(tc.whatIf), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := run(t, "", "lab", "--verify", "-f", file)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			verification := out[strings.Index(out, "== Verification"):]
			for _, w := range tc.want {
				if !strings.Contains(verification, w) {
					t.Errorf("the verification lacks %q:\n%s", w, verification)
				}
			}
			if strings.Contains(verification, tc.old) {
				t.Errorf("the verification still uses the old address %s:\n%s", tc.old, verification)
			}
		})
	}
}
