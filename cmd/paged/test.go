package main

// testCmd is a placeholder until its issue lands.
type testCmd struct{}

func (c *testCmd) Run(e *env) error { return notBuilt("test") }
