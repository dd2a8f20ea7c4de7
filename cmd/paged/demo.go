package main

// demoCmd is a placeholder until its issue lands.
type demoCmd struct{}

func (c *demoCmd) Run(e *env) error { return notBuilt("demo") }
