package main

// notifyTestCmd is a placeholder until its issue lands.
type notifyTestCmd struct{}

func (c *notifyTestCmd) Run(e *env) error { return notBuilt("notify-test") }
