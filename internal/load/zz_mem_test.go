package load

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestScratchMem(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 50000; i++ {
		b.WriteString("---\n")
		writePod(&b, i, "", "")
	}
	text := b.Bytes()
	for _, mode := range []string{"both", "noraw", "notyped"} {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		var objs []*model.Object
		err := Decode(bytes.NewReader(text), "x", func(o *model.Object) error {
			switch mode {
			case "noraw":
				o.Raw = nil
			case "notyped":
				o.Typed = nil
			}
			objs = append(objs, o)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		fmt.Printf("%s retained %d MB\n", mode, (m1.HeapAlloc-m0.HeapAlloc)>>20)
		runtime.KeepAlive(objs)
	}
}
