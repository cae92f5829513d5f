# The two commands of the README. Each does its own set-up.
.PHONY: demo test

demo:
	scripts/demo

test:
	scripts/test
