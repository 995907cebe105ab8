package scenario

// ParseDataUntilStopped is Parse for a scenario that is generated, not read
// from a file (an rpd cluster file's default scenario), of a run that may go
// on until it is stopped: it takes duration: 0 as LoadUntilStopped does.
// name is the scenario's name in errors.
func ParseDataUntilStopped(name string, data []byte) (*Scenario, error) {
	return parseWith(name, data, "", true)
}
