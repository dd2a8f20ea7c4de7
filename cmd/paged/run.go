package main

// runCmd is a placeholder until its issue lands.
type runCmd struct{}

func (c *runCmd) Run(e *env) error { return notBuilt("run") }
