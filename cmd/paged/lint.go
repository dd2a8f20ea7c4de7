package main

// lintCmd is a placeholder until its issue lands.
type lintCmd struct{}

func (c *lintCmd) Run(e *env) error { return notBuilt("lint") }
