package sandbox

// stepNamespace returns the namespace a command acts in: ip netns add NS,
// ip netns exec NS …, ip -n NS …, bridge -n NS …; false for anything else,
// which the executor refuses to run.
func stepNamespace(argv []string) (string, bool) {
	if len(argv) < 3 {
		return "", false
	}
	switch {
	case argv[0] == "ip" && argv[1] == "netns" && (argv[2] == "add" || argv[2] == "exec" || argv[2] == "del" || argv[2] == "pids") && len(argv) >= 4:
		return argv[3], true
	case (argv[0] == "ip" || argv[0] == "bridge") && argv[1] == "-n":
		return argv[2], true
	}
	return "", false
}
