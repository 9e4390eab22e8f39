package powershell

// ScriptStatement is one statement of a script as the reader sees it: the
// variable it assigns ("" for none), whether its pipeline starts with an
// expression, and its commands' names in pipeline order.
type ScriptStatement struct {
	Assign   string
	ExprHead bool
	Commands []string
}

// ParseScript reads a script with the same reader that answers the twin's
// emulated PowerShell, so that a script the tool writes is one it can read.
func ParseScript(text string) ([]ScriptStatement, error) {
	sts, err := parseScript(text)
	if err != nil {
		return nil, err
	}
	out := make([]ScriptStatement, 0, len(sts))
	for _, st := range sts {
		s := ScriptStatement{Assign: st.assign}
		if st.pipe != nil {
			s.ExprHead = st.pipe.head != nil
			for _, c := range st.pipe.cmds {
				s.Commands = append(s.Commands, c.name)
			}
		}
		out = append(out, s)
	}
	return out, nil
}
