# The reliability suite: make reliability, or make reliability ARGS='--long --peers'.
.PHONY: reliability
reliability:
	scripts/reliability.sh $(ARGS)

# The README's two commands.
.PHONY: demo test
demo:
	go run ./cmd/paged demo
test:
	scripts/test.sh
