# The reliability suite: make reliability, or make reliability ARGS='--long --peers'.
.PHONY: reliability
reliability:
	scripts/reliability.sh $(ARGS)
