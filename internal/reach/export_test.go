package reach

import "io"

// printers are reach/output's writers, which the goldens here print
// through. reach/output imports reach, so output_test.go (package
// reach_test) sets them with SetPrinters.
var printers struct {
	text, json, csv func(io.Writer, *Matrix) error
}

// SetPrinters sets the writers the goldens print through.
func SetPrinters(text, json, csv func(io.Writer, *Matrix) error) {
	printers.text, printers.json, printers.csv = text, json, csv
}
