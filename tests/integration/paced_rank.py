"""One rank that only reports: the trainwatch module's step() at a steady pace, no PyTorch.
For the browser tests, which need a job's ranks but not the seconds torch takes to start.
Rank, node and job come from the environment (RANK, LOCAL_RANK, WORLD_SIZE, TRAINWATCH_*).
"""
import time

import trainwatch

tw = trainwatch.init()
print("ready", flush=True)
step = 0
while True:
    step += 1
    time.sleep(0.1)
    tw.step(step, loss=1.0 / step, tokens=1024)
