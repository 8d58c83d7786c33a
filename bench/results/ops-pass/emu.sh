#!/bin/sh
# Starts one emulated vLLM backend with its control endpoint, in its own process group; prints its pid.
#   emu.sh PORT [extra emulator args...]   (log: /tmp/ops/emu-PORT.log)
port=$1; shift
setsid node_modules/.bin/tsx bench/emulator/main.ts --port "$port" --model llama-3.1-8b-instruct --api-key emu-key --control "$@" > /tmp/ops/emu-$port.log 2>&1 &
echo $!
