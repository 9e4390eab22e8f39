package templatehash

// The examples test builds clusters with the engine, which imports this
// package, so it lives in templatehash_test and reaches these through here.
var (
	CheckTemplate   = checkTemplate
	OldTemplateHash = oldTemplateHash
)
