package main

// checkConfigCmd is a placeholder until its issue lands.
type checkConfigCmd struct{}

func (c *checkConfigCmd) Run(e *env) error { return notBuilt("check-config") }
