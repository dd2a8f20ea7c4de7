package main

// simulateCmd is a placeholder until its issue lands.
type simulateCmd struct{}

func (c *simulateCmd) Run(e *env) error { return notBuilt("simulate") }
