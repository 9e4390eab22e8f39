.PHONY: build test docs man golden lab fmt vet fuzz

build:
	go build -o bin/kubectl-hybrid ./cmd/kubectl-hybrid

test:
	go test ./...

vet:
	go vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

lab:
	go run ./cmd/kubectl-hybrid lab

# Regenerate docs/commands.md and the golden files from the binary.
docs:
	go run ./cmd/kubectl-hybrid docs > docs/commands.md

# Man pages (section 1) for every command, into man/ (not committed).
man:
	go run ./cmd/kubectl-hybrid docs man man

golden:
	go test ./internal/cli ./internal/report ./internal/trace ./internal/dns ./internal/check ./internal/dataplane/... -args -update

# A bounded fuzzing run of every command on mutated examples
# (docs/reliability.md).
fuzz:
	go test ./internal/cli -run '^$$' -fuzz FuzzCommandsOnMutatedExamples -fuzztime 60s
