package main

// backtestCmd is a placeholder until its issue lands.
type backtestCmd struct{}

func (c *backtestCmd) Run(e *env) error { return notBuilt("backtest") }
